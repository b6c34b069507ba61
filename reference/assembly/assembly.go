package assembly

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
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
}

// Assembler lays out each step's context. Standard is the design's (0010);
// a kernel takes another only where its embedder must (a test that shows
// the model something else, selfcheck's deviations), and the request still
// checks the template and measures the blocks through it.
type Assembler interface {
	// CheckTemplate refuses an observation template (0010.D4).
	CheckTemplate(tmpl string) error
	// Build returns the messages for one model call and their total size.
	Build(in Input, m Measure) ([]Message, int, error)
}

// Standard is the design's Assembler: CheckTemplate and Build.
type Standard struct{}

// CheckTemplate is CheckTemplate.
func (Standard) CheckTemplate(tmpl string) error { return CheckTemplate(tmpl) }

// Build is Build.
func (Standard) Build(in Input, m Measure) ([]Message, int, error) { return Build(in, m) }

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
	if in.RunFragment != "" {
		if err := add(BlockRunFragment, RoleUser, in.RunFragment); err != nil {
			return nil, 0, err
		}
	}
	for _, ch := range SortedChannels(in.Injections) {
		for _, entry := range in.Injections[ch] {
			if entry == "" {
				continue // 0010.D3.empty-entry
			}
			if err := add(BlockInjection, RoleUser, entry); err != nil {
				return nil, 0, err
			}
		}
	}
	if in.GoalFragment != "" {
		if err := add(BlockGoalFragment, RoleUser, in.GoalFragment); err != nil {
			return nil, 0, err
		}
	}
	tmpl := in.Template
	if tmpl == "" {
		tmpl = DefaultTemplate
	}
	for _, t := range in.History {
		if err := add(BlockModelOutput, RoleAssistant, t.ModelOutput); err != nil {
			return nil, 0, err
		}
		if err := add(BlockObservation, RoleUser, strings.ReplaceAll(tmpl, Placeholder, t.Observation)); err != nil {
			return nil, 0, err
		}
	}
	return msgs, size, nil
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
