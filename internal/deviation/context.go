package deviation

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf16"

	"github.com/polyloop/polyloop-conform/reference/assembly"
	"github.com/polyloop/polyloop-conform/reference/run"
)

// The wrappers around the request's context assembler (0010).

// assembler wraps the request's assembler, the standard one when it has none.
func assembler(f func(a assembly.Assembler, c *run.RequestConfig) assembly.Assembler) func(*run.RequestConfig, run.RequestConfig) error {
	return func(c *run.RequestConfig, _ run.RequestConfig) error {
		a := c.Assembler
		if a == nil {
			a = assembly.Standard{}
		}
		c.Assembler = f(a, c)
		return nil
	}
}

// built is an Assembler whose Build is a function of the one it wraps.
type built struct {
	assembly.Assembler
	build func(in assembly.Input, m assembly.Measure) ([]assembly.Message, int, error)
}

func (b built) Build(in assembly.Input, m assembly.Measure) ([]assembly.Message, int, error) {
	return b.build(in, m)
}

// after changes what the wrapped Build returned.
func after(f func(msgs []assembly.Message, size int, c *run.RequestConfig, m assembly.Measure) ([]assembly.Message, int, error)) func(*run.RequestConfig, run.RequestConfig) error {
	return assembler(func(a assembly.Assembler, c *run.RequestConfig) assembly.Assembler {
		return built{a, func(in assembly.Input, m assembly.Measure) ([]assembly.Message, int, error) {
			msgs, size, err := a.Build(in, m)
			if err != nil {
				return nil, 0, err
			}
			return f(msgs, size, c, m)
		}}
	})
}

// before changes what the wrapped Build gets.
func before(f func(in *assembly.Input)) func(*run.RequestConfig, run.RequestConfig) error {
	return assembler(func(a assembly.Assembler, _ *run.RequestConfig) assembly.Assembler {
		return built{a, func(in assembly.Input, m assembly.Measure) ([]assembly.Message, int, error) {
			f(&in)
			return a.Build(in, m)
		}}
	})
}

// systemMessage puts a system message, measured as a run fragment, before
// the context (0010.D1).
func systemMessage(a assembly.Assembler, _ *run.RequestConfig) assembly.Assembler {
	return built{a, func(in assembly.Input, m assembly.Measure) ([]assembly.Message, int, error) {
		const text = "You are a helpful agent."
		n, err := m(assembly.BlockRunFragment, text)
		if err != nil {
			return nil, 0, fmt.Errorf("measure %s block: %w", assembly.BlockRunFragment, err)
		}
		msgs, size, err := a.Build(in, m)
		if err != nil {
			return nil, 0, err
		}
		return append([]assembly.Message{{Role: "system", Content: text}}, msgs...), size + n, nil
	}}
}

// toolSection renders the tools into the model input as a message, unmeasured (0010.D1.messages-only).
func toolSection(msgs []assembly.Message, size int, c *run.RequestConfig, _ assembly.Measure) ([]assembly.Message, int, error) {
	tools := assembly.Message{Role: assembly.RoleUser, Content: "Tools: " + strings.Join(c.Tools.Names(), ", ")}
	return append([]assembly.Message{tools}, msgs...), size, nil
}

// offByOne counts one more than the measure gives (0010.D5).
func offByOne(msgs []assembly.Message, size int, _ *run.RequestConfig, _ assembly.Measure) ([]assembly.Message, int, error) {
	return msgs, size + 1, nil
}

// normalised folds line breaks in the fragments into spaces (0003.D2).
func normalised(in *assembly.Input) {
	in.RunFragment = strings.Join(strings.Fields(in.RunFragment), " ")
	in.GoalFragment = strings.Join(strings.Fields(in.GoalFragment), " ")
}

// layout is a port's own order of the blocks before the history: the
// wrapped Build lays out the history alone, this the rest.
type layout struct {
	emptyFragments bool                            // an empty fragment still becomes a message
	goalFirst      bool                            // the goal before the injections
	reversed       bool                            // channels in reverse name order
	entries        func(entries []string) []string // a channel's messages; nil drops empty entries
	utf16Order     bool                            // channels in the order of their UTF-16 code units
}

func (l layout) wrap(c *run.RequestConfig, r run.RequestConfig) error {
	return assembler(func(a assembly.Assembler, _ *run.RequestConfig) assembly.Assembler {
		return built{a, func(in assembly.Input, m assembly.Measure) ([]assembly.Message, int, error) {
			head, n, err := l.head(in, m)
			if err != nil {
				return nil, 0, err
			}
			in.RunFragment, in.Injections, in.GoalFragment = "", nil, ""
			msgs, size, err := a.Build(in, m)
			if err != nil {
				return nil, 0, err
			}
			return append(head, msgs...), n + size, nil
		}}
	})(c, r)
}

func (l layout) head(in assembly.Input, m assembly.Measure) ([]assembly.Message, int, error) {
	var msgs []assembly.Message
	size := 0
	var errs []error
	add := func(t assembly.BlockType, text string) {
		if len(errs) > 0 || text == "" && !l.emptyFragments && t != assembly.BlockInjection {
			return
		}
		n, err := m(t, text)
		if err != nil {
			errs = append(errs, fmt.Errorf("measure %s block: %w", t, err))
			return
		}
		size += n
		msgs = append(msgs, assembly.Message{Role: assembly.RoleUser, Content: text})
	}
	add(assembly.BlockRunFragment, in.RunFragment)
	if l.goalFirst {
		add(assembly.BlockGoalFragment, in.GoalFragment)
	}
	channels := assembly.SortedChannels(in.Injections)
	if l.reversed {
		slices.Reverse(channels)
	}
	if l.utf16Order {
		slices.SortFunc(channels, func(a, b string) int {
			return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
		})
	}
	for _, ch := range channels {
		entries := slices.DeleteFunc(slices.Clone(in.Injections[ch]), func(e string) bool { return e == "" })
		if l.entries != nil {
			entries = l.entries(in.Injections[ch])
		}
		for _, e := range entries {
			add(assembly.BlockInjection, e)
		}
	}
	if !l.goalFirst {
		add(assembly.BlockGoalFragment, in.GoalFragment)
	}
	if len(errs) > 0 {
		return nil, 0, errs[0]
	}
	return msgs, size, nil
}

// emptyChannelKept gives a channel with nothing in it one empty message (0010.D3.empty).
func emptyChannelKept(entries []string) []string {
	if !slices.ContainsFunc(entries, func(e string) bool { return e != "" }) {
		return []string{""}
	}
	return entries
}

// checkTemplate replaces the request's template check.
func checkTemplate(f func(inner func(string) error, tmpl string) error) func(*run.RequestConfig, run.RequestConfig) error {
	return assembler(func(a assembly.Assembler, _ *run.RequestConfig) assembly.Assembler {
		return checked{a, func(tmpl string) error { return f(a.CheckTemplate, tmpl) }}
	})
}

type checked struct {
	assembly.Assembler
	check func(string) error
}

func (c checked) CheckTemplate(tmpl string) error { return c.check(tmpl) }

// noPlaceholderCheck accepts a template without {observation} (0010.D4).
func noPlaceholderCheck(func(string) error, string) error { return nil }

// jinjaPlaceholder wants the placeholder spelled {{observation}} (0010.D4.spelling).
func jinjaPlaceholder(inner func(string) error, tmpl string) error {
	if err := inner(tmpl); err != nil {
		return err
	}
	if !strings.Contains(tmpl, "{{observation}}") {
		return errors.New("the observation template has no {{observation}}")
	}
	return nil
}

// whitespaceIsEmpty strips the fragments, and drops whitespace-only
// injection entries, before the emptiness test (0010.D2.whitespace).
func whitespaceIsEmpty(in *assembly.Input) {
	in.RunFragment, in.GoalFragment = strings.TrimSpace(in.RunFragment), strings.TrimSpace(in.GoalFragment)
	inj := make(map[string][]string, len(in.Injections))
	for ch, entries := range in.Injections {
		inj[ch] = slices.DeleteFunc(slices.Clone(entries), func(e string) bool { return e != "" && strings.TrimSpace(e) == "" })
	}
	in.Injections = inj
}

// turnBlock is one message of the history: its block type, role and text.
type turnBlock struct {
	t    assembly.BlockType
	role string
	text string
}

// history lays out the history a port's own way: the wrapped Build lays
// out everything before it, render each turn's messages.
func history(render func(t assembly.Turn, tmpl string) []turnBlock) func(*run.RequestConfig, run.RequestConfig) error {
	return assembler(func(a assembly.Assembler, _ *run.RequestConfig) assembly.Assembler {
		return built{a, func(in assembly.Input, m assembly.Measure) ([]assembly.Message, int, error) {
			turns := in.History
			in.History = nil
			msgs, size, err := a.Build(in, m)
			if err != nil {
				return nil, 0, err
			}
			tmpl := in.Template
			if tmpl == "" {
				tmpl = assembly.DefaultTemplate
			}
			for _, t := range turns {
				for _, b := range render(t, tmpl) {
					n, err := m(b.t, b.text)
					if err != nil {
						return nil, 0, fmt.Errorf("measure %s block: %w", b.t, err)
					}
					size += n
					msgs = append(msgs, assembly.Message{Role: b.role, Content: b.text})
				}
			}
			return msgs, size, nil
		}}
	})
}

// emptyTurnDropped adds no message for an empty model output or an empty
// observation (0010.D2.turns).
func emptyTurnDropped(t assembly.Turn, tmpl string) []turnBlock {
	var out []turnBlock
	if t.ModelOutput != "" {
		out = append(out, turnBlock{assembly.BlockModelOutput, assembly.RoleAssistant, t.ModelOutput})
	}
	if t.Observation != "" {
		out = append(out, turnBlock{assembly.BlockObservation, assembly.RoleUser, strings.ReplaceAll(tmpl, assembly.Placeholder, t.Observation)})
	}
	return out
}

// bracesFormatted applies the template as a Python format string, {{ and
// }} escapes for single braces (0010.D4.spelling).
func bracesFormatted(t assembly.Turn, tmpl string) []turnBlock {
	r := strings.NewReplacer("{{", "\x00", "}}", "\x01").Replace(tmpl)
	r = strings.ReplaceAll(r, assembly.Placeholder, t.Observation)
	obs := strings.NewReplacer("\x00", "{", "\x01", "}").Replace(r)
	return []turnBlock{
		{assembly.BlockModelOutput, assembly.RoleAssistant, t.ModelOutput},
		{assembly.BlockObservation, assembly.RoleUser, obs},
	}
}
