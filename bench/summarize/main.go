// Command summarize reads `go test -bench` output and prints the table of
// docs/performance.md: the median of each tracked metric over the repeated
// runs, its spread, its target, and the ratio to the target. With -rss it
// also runs commands and reports their peak resident memory.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

type target struct {
	bench, unit, label string
	goal               float64
	higherIsBetter     bool
}

var targets = []target{
	{"BenchmarkSuiteInProcess", "scenarios/s", "in-process scenario runs per second", 20000, true},
	{"BenchmarkSuiteInProcessTmpfs", "scenarios/s", "in-process, journals on tmpfs (fsync nearly free)", 20000, true},
	{"BenchmarkSuiteSubprocess/long-lived", "scenarios/s", "one long-lived serve-reference: scenario runs per second", 3000, true},
	{"BenchmarkSuiteSubprocess/all", "scenarios/s", "serve-reference incl. crash scenarios (new process each)", 0, true},
	{"BenchmarkKillAndResume", "cycles/s", "kill-and-resume cycles per second", 200, true},
	{"BenchmarkGenerate", "cases/s", "generated cases compared, reference vs reference in process", 0, true},
	{"BenchmarkStep", "ns/step", "kernel overhead per step (ns)", 5000, false},
	{"BenchmarkStepJournal", "journal/fsync", "journal time / bare fsync time", 1.2, false},
	{"BenchmarkDiff/steps=1000", "ms/1k-steps", "compare, ms per 1k steps at 1k steps", 5, false},
	{"BenchmarkDiff/steps=10000", "ns/op", "compare 10k steps (ms)", 50e6, false},
	{"BenchmarkDiff/steps=10000", "ms/1k-steps", "compare, ms per 1k steps at 10k steps", 5, false},
	{"BenchmarkDiff/steps=100000", "ms/1k-steps", "compare, ms per 1k steps at 100k steps", 5, false},
	{"BenchmarkLoadAll", "scenarios/s", "scenario load + schema validation per second", 0, true},
	{"BenchmarkParseGoldens", "trajectories/s", "trajectory schema validation + decode per second", 0, true},
}

// pair is a ratio of two measurements taken in the same bench/run: the
// one under test over the one it is compared with, and the largest ratio
// allowed (for costs; a rate's ratio is inverted first).
type pair struct {
	label, unit    string
	test, against  string // benchmark names; against may be "baseline:NAME" (the -baseline file)
	max            float64
	higherIsBetter bool
}

var pairs = []pair{
	{"protocol decode, typed / schema (ns per corpus)", "ns/op", "BenchmarkDecode/typed", "BenchmarkDecode/schema", 1, false},
	{"per scenario over the protocol, now / df1af26", "scenarios/s", "BenchmarkSuiteSubprocess/long-lived", "baseline:BenchmarkSuiteSubprocess/long-lived", 1.2, true},
	{"Python crash exploration, fork server / reference", "s", "BenchmarkExplore/python-fork", "BenchmarkExplore/reference", 2, false},
	{"Python crash exploration, fork server / new processes", "s", "BenchmarkExplore/python-fork", "BenchmarkExplore/python-no-fork", 1, false},
}

type rssFlags []string

func (r *rssFlags) String() string     { return strings.Join(*r, "; ") }
func (r *rssFlags) Set(v string) error { *r = append(*r, v); return nil }

func main() {
	raw := flag.String("raw", "", "`FILE` of go test -bench output")
	baselineRaw := flag.String("baseline", "", "`FILE` of go test -bench output of the baseline commit (optional)")
	var rss rssFlags
	flag.Var(&rss, "rss", "run `CMD` through /bin/sh and report its peak RSS (repeatable)")
	flag.Parse()
	values, err := read(*raw)
	if err != nil {
		fmt.Fprintln(os.Stderr, "summarize:", err)
		os.Exit(2)
	}
	fmt.Printf("\n%-56s %14s %22s %10s %8s\n", "metric", "median", "range", "target", "ratio")
	for _, t := range targets {
		vs := values[t.bench+" "+t.unit]
		if len(vs) == 0 {
			fmt.Printf("%-56s %14s\n", t.label, "(not run)")
			continue
		}
		sort.Float64s(vs)
		med := vs[len(vs)/2]
		scale, unit := 1.0, ""
		if t.unit == "ns/op" {
			scale, unit = 1e-6, "" // shown in ms
		}
		goal, ratio := "-", "-"
		if t.goal > 0 {
			goal = num(t.goal * scale)
			r := med / t.goal
			if t.higherIsBetter {
				ratio = fmt.Sprintf("%.2f", r)
			} else {
				ratio = fmt.Sprintf("%.2f", r)
			}
			if (t.higherIsBetter && r >= 1) || (!t.higherIsBetter && r <= 1) {
				ratio += " ok"
			} else {
				ratio += " !!"
			}
		}
		fmt.Printf("%-56s %14s %22s %10s %8s%s\n", t.label, num(med*scale), num(vs[0]*scale)+" – "+num(vs[len(vs)-1]*scale), goal, ratio, unit)
	}
	fmt.Println("(ratio is median / target: ≥ 1 is good for rates, ≤ 1 for costs; n =", countOf(values), "runs each)")
	baseline := map[string][]float64{}
	if *baselineRaw != "" {
		if baseline, err = read(*baselineRaw); err != nil {
			fmt.Fprintln(os.Stderr, "summarize:", err)
			os.Exit(2)
		}
	}
	fmt.Printf("\n%-56s %10s %10s %8s %8s\n", "pair, measured in this run", "test", "against", "ratio", "max")
	for _, p := range pairs {
		a := median(values[p.test+" "+p.unit])
		b := median(values[p.against+" "+p.unit])
		if name, ok := strings.CutPrefix(p.against, "baseline:"); ok {
			b = median(baseline[name+" "+p.unit])
		}
		if a == 0 || b == 0 {
			fmt.Printf("%-56s %10s\n", p.label, "(not run)")
			continue
		}
		r := a / b
		if p.higherIsBetter {
			r = b / a // a cost ratio: how many times slower
		}
		mark := "ok"
		if r > p.max {
			mark = "!!"
		}
		fmt.Printf("%-56s %10s %10s %8.2f %8.2f %s\n", p.label, num(a), num(b), r, p.max, mark)
	}
	for _, cmd := range rss {
		kb, err := peakRSS(cmd)
		if err != nil {
			fmt.Printf("peak RSS of %q: %v\n", cmd, err)
			continue
		}
		mark := "ok"
		if kb > 100*1024 {
			mark = "!!"
		}
		fmt.Printf("peak RSS of %-60q %6.1f MB (target < 100 MB) %s\n", cmd, float64(kb)/1024, mark)
	}
}

func read(path string) (map[string][]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string][]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") {
			continue
		}
		name := fields[0]
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			name = name[:i] // drop -GOMAXPROCS
		}
		for i := 2; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				continue
			}
			out[name+" "+fields[i+1]] = append(out[name+" "+fields[i+1]], v)
		}
	}
	return out, sc.Err()
}

func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	vs = append([]float64(nil), vs...)
	sort.Float64s(vs)
	return vs[len(vs)/2]
}

func countOf(values map[string][]float64) int {
	n := 0
	for _, v := range values {
		if len(v) > n {
			n = len(v)
		}
	}
	return n
}

func num(v float64) string {
	switch {
	case v >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
}

func peakRSS(cmdline string) (int64, error) {
	cmd := exec.Command("/bin/sh", "-c", "exec "+cmdline)
	if err := cmd.Run(); err != nil {
		return 0, err
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, fmt.Errorf("no rusage on this platform")
	}
	return ru.Maxrss, nil // kilobytes on Linux
}
