package assembly

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/polyloop/polyloop-conform/reference/deviation"
)

// Message is one entry of the model input.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// The two roles the reference sends; it never sends "system" (0010.D1).
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// BlockType names a kind of context block for size measurement.
type BlockType string

// The block types assembly produces. A Measure must know every one of them.
const (
	BlockRunFragment  BlockType = "run_fragment"
	BlockInjection    BlockType = "injection"
	BlockGoalFragment BlockType = "goal_fragment"
	BlockModelOutput  BlockType = "model_output"
	BlockObservation  BlockType = "observation"
)

// BlockTypes lists every block type in assembly order (a fresh slice each
// call, so no caller can change another's view).
func BlockTypes() []BlockType {
	return []BlockType{BlockRunFragment, BlockInjection, BlockGoalFragment, BlockModelOutput, BlockObservation}
}

// Placeholder is where an observation goes in the observation template.
const Placeholder = "{observation}"

// DefaultTemplate passes the observation through unchanged.
const DefaultTemplate = Placeholder

// ErrNoPlaceholder is returned for an observation template without
// Placeholder: every observation would silently vanish (0010.D4).
var ErrNoPlaceholder = errors.New("the observation template has no " + Placeholder + " placeholder, so every observation would be dropped; add " + Placeholder + " where the observation belongs")

// CheckTemplate refuses a template that would drop observations.
func CheckTemplate(tmpl string) error {
	if !strings.Contains(tmpl, Placeholder) {
		return ErrNoPlaceholder
	}
	return nil
}

// Measure returns the size of one block; it must fail for a block type it
// does not know rather than count it as zero (0010.D5).
type Measure func(t BlockType, text string) (int, error)

// RuneCount is the reference measure: Unicode code points.
func RuneCount(_ BlockType, text string) (int, error) { return utf8.RuneCountInString(text), nil }

// ProbeMeasure asks the measure about every block type once, so a measure
// that does not know one fails at assembly, not mid-run.
func ProbeMeasure(m Measure) error {
	for _, t := range BlockTypes() {
		if _, err := m(t, ""); err != nil {
			return fmt.Errorf("the context size measure does not handle block type %q: %w", t, err)
		}
	}
	return nil
}

// Turn is one settled step as the history holds it.
type Turn struct {
	ModelOutput string
	Observation string
}

// Input is everything one step's context is built from.
type Input struct {
	RunFragment  string
	Injections   map[string][]string
	GoalFragment string
	History      []Turn
	Template     string
	// Deviations turns on departures from 0010, for selfcheck.
	Deviations deviation.Set
}

// Build returns the messages for one model call and their total size.
func Build(in Input, m Measure) ([]Message, int, error) {
	var msgs []Message
	size := 0
	add := func(t BlockType, role, text string) error {
		n, err := m(t, text)
		if err != nil {
			return fmt.Errorf("measure %s block: %w", t, err)
		}
		size += n
		msgs = append(msgs, Message{Role: role, Content: text})
		return nil
	}
	dev := in.Deviations
	if dev.On(deviation.SystemMessage) {
		if err := add(BlockRunFragment, "system", "You are a helpful agent."); err != nil {
			return nil, 0, err
		}
	}
	runFragment, goal := in.RunFragment, in.GoalFragment
	if dev.On(deviation.FragmentsNormalised) {
		runFragment = strings.Join(strings.Fields(runFragment), " ")
		goal = strings.Join(strings.Fields(goal), " ")
	}
	keepEmpty := dev.On(deviation.EmptyFragmentMessage)
	if dev.On(deviation.WhitespaceIsEmpty) {
		runFragment, goal = strings.TrimSpace(runFragment), strings.TrimSpace(goal)
	}
	if runFragment != "" || keepEmpty {
		if err := add(BlockRunFragment, RoleUser, runFragment); err != nil {
			return nil, 0, err
		}
	}
	addGoal := func() error {
		if goal == "" && !keepEmpty {
			return nil
		}
		return add(BlockGoalFragment, RoleUser, goal)
	}
	if dev.On(deviation.GoalBeforeInjections) {
		if err := addGoal(); err != nil {
			return nil, 0, err
		}
	}
	channels := SortedChannels(in.Injections)
	if dev.On(deviation.InjectionsUnsorted) {
		slices.Reverse(channels)
	}
	for _, ch := range channels {
		entries := in.Injections[ch]
		if dev.On(deviation.EmptyChannelKept) && !slices.ContainsFunc(entries, func(e string) bool { return e != "" }) {
			// A port that drops empty entries and then still gives the
			// channel, left with nothing, its own (empty) message.
			entries = []string{""}
		}
		for _, entry := range entries {
			if dev.On(deviation.WhitespaceIsEmpty) && strings.TrimSpace(entry) == "" {
				continue
			}
			if entry == "" && !dev.On(deviation.EmptyInjectionKept) && !dev.On(deviation.EmptyChannelKept) {
				continue
			}
			if err := add(BlockInjection, RoleUser, entry); err != nil {
				return nil, 0, err
			}
		}
	}
	if !dev.On(deviation.GoalBeforeInjections) {
		if err := addGoal(); err != nil {
			return nil, 0, err
		}
	}
	tmpl := in.Template
	if tmpl == "" {
		tmpl = DefaultTemplate
	}
	dropEmpty := dev.On(deviation.EmptyTurnDropped)
	for _, t := range in.History {
		if t.ModelOutput != "" || !dropEmpty {
			if err := add(BlockModelOutput, RoleAssistant, t.ModelOutput); err != nil {
				return nil, 0, err
			}
		}
		if t.Observation == "" && dropEmpty {
			continue
		}
		obs := strings.ReplaceAll(tmpl, Placeholder, t.Observation)
		if dev.On(deviation.TemplateBracesFormatted) {
			obs = formatBraces(tmpl, t.Observation)
		}
		if err := add(BlockObservation, RoleUser, obs); err != nil {
			return nil, 0, err
		}
	}
	return msgs, size, nil
}

// formatBraces is deviation TemplateBracesFormatted: the template read as
// a Python format string, {{ and }} escapes for single braces.
func formatBraces(tmpl, obs string) string {
	r := strings.NewReplacer("{{", "\x00", "}}", "\x01").Replace(tmpl)
	r = strings.ReplaceAll(r, Placeholder, obs)
	return strings.NewReplacer("\x00", "{", "\x01", "}").Replace(r)
}

// AppendTurn adds one settled step's model output and observation to
// msgs, which Build produced for the same input, and returns the new list
// and size. The run loop uses it so that a step costs the same whatever the
// history's length; the order is Build's.
func AppendTurn(msgs []Message, size int, t Turn, tmpl string, m Measure) ([]Message, int, error) {
	if tmpl == "" {
		tmpl = DefaultTemplate
	}
	obs := strings.ReplaceAll(tmpl, Placeholder, t.Observation)
	n1, err := m(BlockModelOutput, t.ModelOutput)
	if err != nil {
		return nil, 0, fmt.Errorf("measure %s block: %w", BlockModelOutput, err)
	}
	n2, err := m(BlockObservation, obs)
	if err != nil {
		return nil, 0, fmt.Errorf("measure %s block: %w", BlockObservation, err)
	}
	msgs = append(msgs, Message{Role: RoleAssistant, Content: t.ModelOutput}, Message{Role: RoleUser, Content: obs})
	return msgs, size + n1 + n2, nil
}

// SortedChannels returns injection channel names in byte order, so message
// order never depends on how the caller built its map (0010.D3).
func SortedChannels(inj map[string][]string) []string {
	out := make([]string, 0, len(inj))
	for k := range inj {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
