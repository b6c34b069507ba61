package docgen

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/polyloop/polyloop-conform/internal/atomicfile"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

func writeFile(path string, data []byte) error { return atomicfile.Write(path, data) }

// Thousands writes n with a comma between thousands, as the docs do.
func Thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// suiteSize counts the embedded suite.
func suiteSize(*Env) (string, error) {
	all, err := scenarios.LoadAll(scenarios.Embedded())
	if err != nil {
		return "", err
	}
	goldens, err := trajectories.Goldens()
	if err != nil {
		return "", err
	}
	families, must := map[string]bool{}, 0
	for _, sc := range all {
		families[scenarios.Family(sc.ID)] = true
		if sc.Level == "MUST" {
			must++
		}
	}
	return fmt.Sprintf("The suite holds %d scenarios in %d families (%d of them MUST), and %d goldens.\n",
		len(all), len(families), must, len(goldens)), nil
}

// evidenceCounts are the counts of the two evidence runs.
type evidenceCounts struct {
	Scenarios      int
	All, Plain     passes
	Events, Blocks int
}

type passes struct{ Observed, Trusted, Self, Failed int }

// runEvidence runs the whole suite twice over the protocol, against
// serve-reference (every protocol option) and serve-reference --plain (no
// option), with --require none so self-reported passes are counted, not
// failed, and --generate 0 so the counts are the suite's scenarios.
func (e *Env) runEvidence() (evidenceCounts, error) {
	e.evOnce.Do(func() {
		bin, err := e.Binary()
		if err != nil {
			e.evErr = err
			return
		}
		run := func(impl, transcripts string) (passes, int, error) {
			out := filepath.Join(e.Tmp, "report.json")
			args := []string{"run", "--impl", impl, "-p", "2", "--require", "none", "--generate", "0", "--format", "json", "--out", out}
			if transcripts != "" {
				args = append(args, "--transcripts", transcripts)
			}
			cmd := exec.CommandContext(e.Ctx, bin, args...)
			if b, err := cmd.CombinedOutput(); err != nil {
				return passes{}, 0, fmt.Errorf("polyloop-conform %s: %v\n%s", strings.Join(args, " "), err, b)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				return passes{}, 0, err
			}
			var rep struct {
				Counts struct {
					Passed   int `json:"passed"`
					Skipped  int `json:"skipped"`
					Known    int `json:"known_failing"`
					Observed int `json:"passed_observed"`
					Trusted  int `json:"passed_trusted"`
					Self     int `json:"passed_self_reported"`
					Failed   int `json:"failed"`
				} `json:"counts"`
			}
			if err := json.Unmarshal(data, &rep); err != nil {
				return passes{}, 0, err
			}
			c := rep.Counts
			return passes{c.Observed, c.Trusted, c.Self, c.Failed}, c.Passed + c.Failed + c.Skipped + c.Known, nil
		}
		var ev evidenceCounts
		if ev.Plain, _, err = run(bin+" serve-reference --plain", ""); err != nil {
			e.evErr = err
			return
		}
		dir := filepath.Join(e.Tmp, "transcripts")
		if ev.All, ev.Scenarios, err = run(bin+" serve-reference", dir); err != nil {
			e.evErr = err
			return
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				e.evErr = err
				return
			}
			ev.Events += strings.Count(string(data), `{"from":"implementation","message":{"type":"event",`)
			ev.Blocks += strings.Count(string(data), `{"from":"implementation","message":{"type":"measure_call",`)
		}
		switch {
		case ev.Events == 0 || ev.Blocks == 0:
			e.evErr = fmt.Errorf("the transcripts hold %d events and %d measure calls: the runner's transcript format changed", ev.Events, ev.Blocks)
		case ev.All.Self != 0:
			e.evErr = fmt.Errorf("with every option, %d passes are still self-reported; the docs say none are", ev.All.Self)
		case ev.All.Failed != 0 || ev.Plain.Failed != 0:
			e.evErr = fmt.Errorf("the reference fails %d scenarios (%d with --plain); the counts would describe a red suite", ev.All.Failed, ev.Plain.Failed)
		case ev.Scenarios != ev.All.Observed+ev.All.Trusted:
			e.evErr = fmt.Errorf("the report counts %d scenarios but %d passes observed or trusted: a scenario was skipped or the counts changed meaning", ev.Scenarios, ev.All.Observed+ev.All.Trusted)
		}
		e.ev = ev
	})
	return e.ev, e.evErr
}

// evidence is docs/protocol.md's paragraph on what the options change.
func evidence(e *Env) (string, error) {
	ev, err := e.runEvidence()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("The whole suite sends %s events and %s measured blocks. The verdicts: with every option %d\n"+
		"passes observed and %d taken on trust; `serve-reference --plain` %d observed, %d taken on trust\n"+
		"and %d self-reported (which the default `--require observed` fails).\n",
		Thousands(ev.Events), Thousands(ev.Blocks), ev.All.Observed, ev.All.Trusted, ev.Plain.Observed, ev.Plain.Trusted, ev.Plain.Self), nil
}

// evidenceShort is the verdicts alone, for docs/limits.md.
func evidenceShort(e *Env) (string, error) {
	ev, err := e.runEvidence()
	if err != nil {
		return "", err
	}
	pass := ev.All.Observed + ev.All.Trusted
	return fmt.Sprintf("`serve-reference` (every protocol option): %d of %d scenarios pass the default `--require\n"+
		"observed`, %d observed and %d taken on trust. `serve-reference --plain` (no option) fails %d\n"+
		"self-reported passes by default, and passes with `--require none`.\n",
		pass, ev.Scenarios, ev.All.Observed, ev.All.Trusted, ev.Plain.Self), nil
}

var exploreSummary = regexp.MustCompile(`explore: (\d+) scenarios, (\d+) crash points killed and resumed \((\d+) from a torn record, (\d+) after a decoy's kill\), (\d+) SAFE replays, (\d+) resume_outcome_unknown, (\d+) failed points`)

// crashPoints is what `explore --run 'resume.*'` covers against the
// reference.
func crashPoints(e *Env) (string, error) {
	bin, err := e.Binary()
	if err != nil {
		return "", err
	}
	args := []string{"explore", "--impl", bin + " serve-reference", "--run", "resume.*", "-p", "2"}
	out, err := exec.CommandContext(e.Ctx, bin, args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("polyloop-conform %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	m := exploreSummary.FindStringSubmatch(string(out))
	if m == nil {
		return "", fmt.Errorf("explore printed no summary line the generator reads (%s):\n%s", exploreSummary, out)
	}
	if m[7] != "0" {
		return "", fmt.Errorf("explore fails %s crash points of the reference:\n%s", m[7], out)
	}
	return fmt.Sprintf("`explore --run 'resume.*'` kills and resumes the reference at %s crash points of %s scenarios\n"+
		"(%s from a torn record, %s after a decoy's kill; %s SAFE replays, %s `resume_outcome_unknown`).\n",
		m[2], m[1], m[3], m[4], m[5], m[6]), nil
}

// trajectoryFields is docs/trajectory-format.md's field table: every field
// of the format with its class and meaning, from the schema.
func trajectoryFields(*Env) (string, error) {
	fs, err := trajectories.Fields()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("| field | class | meaning |\n|---|---|---|\n")
	for _, f := range fs {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", f.Path, f.Class, strings.ReplaceAll(f.Meaning, "|", `\|`))
	}
	return b.String(), nil
}
