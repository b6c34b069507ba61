package cli

import (
	"bytes"
	"flag"
	"fmt"
	"strings"

	"github.com/polyloop/polyloop-conform/docs/design"
	"github.com/polyloop/polyloop-conform/internal/atomicfile"
	"github.com/polyloop/polyloop-conform/internal/decisions"
	"github.com/polyloop/polyloop-conform/internal/protocol"
	"github.com/polyloop/polyloop-conform/internal/report"
)

// reportFlags are the output flags every command that writes a report
// shares: one --format (--report is kept as an alias), --out, --brief and
// --trace.
type reportFlags struct {
	format string
	out    string
	brief  bool
	trace  bool
	write  report.Writer
}

func (f *reportFlags) register(fs *flag.FlagSet, trace bool) { f.registerAs(fs, trace, "out") }

// registerAs is register with the report file's flag named out.
func (f *reportFlags) registerAs(fs *flag.FlagSet, trace bool, out string) {
	fs.StringVar(&f.format, "format", "text", report.Usage())
	fs.StringVar(&f.format, "report", "text", "alias of --format")
	fs.StringVar(&f.out, out, "", "write the report to `FILE` instead of standard output (atomically)")
	fs.BoolVar(&f.brief, "brief", false, "text: print the causes of the failures and the totals only")
	if trace {
		fs.BoolVar(&f.trace, "trace", false, "for failing scenarios, print the protocol exchange and the implementation's stderr under each")
	}
}

// check validates the format and the output path before anything runs: a
// report lost after a long run is worse than a refusal to start.
func (f *reportFlags) check() error {
	w, err := report.Lookup(f.format)
	if err != nil {
		return err
	}
	f.write = w
	if f.out != "" {
		if err := atomicfile.CheckOutput(f.out); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	return nil
}

// emit writes rep, with extra lines after a text report, to --out or
// standard output, and on a file also prints the summary line.
func (f *reportFlags) emit(s stdio, rep *report.Report, extra string) error {
	rep.KeepCitedDecisions()
	var buf bytes.Buffer
	if err := f.write(&buf, rep, report.Options{Brief: f.brief, Trace: f.trace}); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if f.format == "text" {
		buf.WriteString(extra)
	}
	if f.out == "" {
		if _, err := s.out.Write(buf.Bytes()); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
		return nil
	}
	if err := atomicfile.Output(f.out, buf.Bytes()); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	fmt.Fprintf(s.out, "%s (report in %s)\n", rep.Summary(), f.out)
	return nil
}

// newReport starts a report of the suite's version with the titles of the
// decisions the built-in design records define, and the command that
// reruns this run (args without --run, --out, --format and their values).
func newReport(implementation, command string, args []string) *report.Report {
	rep := report.New(implementation, protocol.SuiteVersion)
	rep.Rerun = rerunCommand(command, args)
	if set, err := decisions.Load(design.FS); err == nil {
		rep.Decisions = map[string]report.Decision{}
		for id, d := range set.ByID {
			rep.Decisions[id] = report.Decision{Title: d.Title, Text: d.Body()}
		}
	}
	return rep
}

// rerunCommand rebuilds a command line from its arguments, dropping the
// flags that select scenarios or say where the report goes.
func rerunCommand(command string, args []string) string {
	drop := map[string]bool{"run": true, "out": true, "format": true, "report": true, "report-out": true, "shard": true, "brief": true, "trace": true, "known-failing": true}
	parts := []string{"polyloop-conform", command}
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && drop[name] {
			if !hasValue && name != "brief" && name != "trace" && i+1 < len(args) {
				i++
			}
			continue
		}
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,@%+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// listFormat is --format for the commands whose output is a list rather
// than a report (list, diff): text or json, with the older --json kept as
// an alias of --format json.
type listFormat struct{ name string }

func (f *listFormat) register(fs *flag.FlagSet, what string) {
	f.name = "text"
	fs.Func("format", "`text` or json: "+what+" (default text)", func(v string) error {
		if v != "text" && v != "json" {
			return fmt.Errorf("choose text or json")
		}
		f.name = v
		return nil
	})
	fs.BoolFunc("json", "alias of --format json", func(v string) error {
		if v == "true" {
			f.name = "json"
		} else {
			f.name = "text"
		}
		return nil
	})
}

func (f listFormat) json() bool { return f.name == "json" }
