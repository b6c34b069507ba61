// Package gate is the CI gate for design-doc changes: it compares the
// working tree with a base revision and refuses golden changes that no
// decision change explains, decision changes that no scenario checks,
// stale goldens, and upstream design-doc changes that were not reviewed.
package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/polyloop/polyloop-conform/internal/compare"
	"github.com/polyloop/polyloop-conform/internal/decisions"
	"github.com/polyloop/polyloop-conform/internal/engine"
	"github.com/polyloop/polyloop-conform/internal/refdriver"
	"github.com/polyloop/polyloop-conform/internal/upstream"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// Options say what to compare.
type Options struct {
	Dir      string // the repository's working tree
	Base     string // git revision to compare with; empty skips the git rules
	Upstream string // PolyLoop's design-doc folder; empty skips upstream checks
	Lock     string // lock file; default docs/design/upstream.lock.json
}

// Result lists what the gate found.
type Result struct {
	Problems []string
	Notes    []string
}

// Layout of the repository the gate reads.
const (
	DesignDir   = "docs/design"
	ScenarioDir = "scenarios"
	GoldenDir   = "trajectories"
	LockFile    = "docs/design/upstream.lock.json"
)

// Check runs every rule. A tree without the suite's layout is a set-up
// error: a gate that finds nothing to check must not pass.
func Check(ctx context.Context, o Options) (*Result, error) {
	if err := checkLayout(o.Dir); err != nil {
		return nil, err
	}
	r := &Result{}
	cur, err := decisions.Load(os.DirFS(filepath.Join(o.Dir, DesignDir)))
	if err != nil {
		return nil, err
	}
	scs, err := scenarios.LoadAll(os.DirFS(filepath.Join(o.Dir, ScenarioDir)))
	if err != nil {
		return nil, err
	}
	goldens, err := trajectories.GoldensFromDir(filepath.Join(o.Dir, GoldenDir))
	if err != nil {
		return nil, err
	}
	passing := regenerate(ctx, scs, goldens, r)
	if o.Base != "" {
		if err := gitRules(o, cur, scs, passing, r); err != nil {
			return nil, err
		}
	}
	if o.Upstream != "" {
		if err := upstreamRules(o, cur, scs, r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// checkLayout refuses a directory that is not a polyloop-conform tree.
func checkLayout(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("gate --dir %s: %w; pass the repository's top directory", dir, errors.Unwrap(err))
	}
	if !st.IsDir() {
		return fmt.Errorf("gate --dir %s: not a directory; pass the repository's top directory", dir)
	}
	for _, sub := range []struct{ path, glob string }{{ScenarioDir, "*.yaml"}, {GoldenDir, "*.json"}, {DesignDir, "*.md"}} {
		m, _ := filepath.Glob(filepath.Join(dir, sub.path, sub.glob))
		if len(m) == 0 {
			return fmt.Errorf("gate --dir %s: no %s in %s/, so there is nothing to gate; run the gate at the repository's top (or pass --dir)", dir, sub.glob, sub.path)
		}
	}
	return nil
}

// regenerate runs every scenario on the reference and compares the result
// with the committed golden byte for byte. It returns the scenarios that
// pass their expect block with an up-to-date golden.
func regenerate(ctx context.Context, scs []*scenarios.Scenario, goldens map[string][]byte, r *Result) map[string]bool {
	passing := map[string]bool{}
	suite := &engine.Suite{Scenarios: scs}
	for _, sc := range scs {
		res := suite.Run(ctx, refdriver.Driver{}, sc)
		if !res.Passed() {
			r.Problems = append(r.Problems, fmt.Sprintf("scenario %s fails against the reference: %s", sc.ID, strings.Join(append(res.Messages(), res.Skipped), "; ")))
			continue
		}
		fresh, err := trajectories.Marshal(res.Trajectory)
		if err != nil {
			r.Problems = append(r.Problems, err.Error())
			continue
		}
		old, ok := goldens[sc.ID]
		switch {
		case !ok:
			// Reported with the orphans below.
		case !bytes.Equal(old, fresh):
			r.Problems = append(r.Problems, fmt.Sprintf("golden trajectories/%s.json is stale: the reference now produces %s; regenerate with go test ./conformance -args -update and review the diff", sc.ID, firstDiff(old, fresh)))
		default:
			passing[sc.ID] = true
		}
	}
	// Scenarios without goldens and goldens without scenarios, worded as
	// the suite's own hygiene check words them.
	r.Problems = append(r.Problems, (&engine.Suite{Scenarios: scs, Goldens: goldens}).Missing()...)
	return passing
}

func firstDiff(old, fresh []byte) string {
	_, a, err1 := trajectories.Parse("golden", old)
	_, b, err2 := trajectories.Parse("fresh", fresh)
	if err1 != nil || err2 != nil {
		return "different bytes"
	}
	d, _ := compare.Diff(a, b, compare.Options{})
	if len(d) == 0 {
		return "the same content formatted differently"
	}
	more := ""
	if len(d) > 1 {
		more = fmt.Sprintf(" (and %d more differences)", len(d)-1)
	}
	return d[0].String() + more
}

// wordingOnly reports whether golden id differs from its version at base
// only in fields of class text: compared by the trajectory format's
// classes, the two are equal.
func wordingOnly(dir, base, id string) bool {
	old, err := git(dir, "show", base+":"+GoldenDir+"/"+id+".json")
	if err != nil {
		return false
	}
	cur, err := os.ReadFile(filepath.Join(dir, GoldenDir, id+".json"))
	if err != nil {
		return false
	}
	_, a, err := trajectories.Parse("base golden "+id, []byte(old))
	if err != nil {
		return false
	}
	_, b, err := trajectories.Parse("golden "+id, cur)
	if err != nil {
		return false
	}
	class, err := trajectories.Classifier(a)
	if err != nil {
		return false
	}
	d, err := compare.Diff(a, b, compare.Options{Class: class})
	return err == nil && len(d) == 0
}

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// changedFiles lists paths that differ between base and the working tree,
// untracked files included.
func changedFiles(dir, base string) (map[string]bool, error) {
	diff, err := git(dir, "diff", "--name-only", base, "--")
	if err != nil {
		return nil, err
	}
	untracked, err := git(dir, "ls-files", "--others", "--exclude-standard")
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, l := range strings.Split(diff+"\n"+untracked, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out[l] = true
		}
	}
	return out, nil
}

// baseDecisions reads the decision records as they were at base.
func baseDecisions(dir, base string) (map[string]decisions.Decision, error) {
	list, err := git(dir, "ls-tree", "--name-only", base, DesignDir+"/")
	if err != nil {
		return nil, err
	}
	out := map[string]decisions.Decision{}
	for _, p := range strings.Fields(list) {
		if !strings.HasSuffix(p, ".md") || path.Base(p) == "README.md" {
			continue
		}
		data, err := git(dir, "show", base+":"+p)
		if err != nil {
			return nil, err
		}
		ds, err := decisions.Parse(path.Base(p)+"@"+base, []byte(data))
		if err != nil {
			return nil, err
		}
		for _, d := range ds {
			out[d.ID] = d
		}
	}
	return out, nil
}

// change is what changed between the base commit and the work tree: the
// files, the decisions before and the ones whose text changed, and the
// goldens and scenarios the base held.
type change struct {
	files   map[string]bool
	before  map[string]decisions.Decision
	changed map[string]bool
	atBase  map[string]bool
}

// gitRules applies the rules that compare the work tree with o.Base.
func gitRules(o Options, cur *decisions.Set, scs []*scenarios.Scenario, passing map[string]bool, r *Result) error {
	c, err := changeSince(o, cur)
	if err != nil {
		return err
	}
	byID := map[string]*scenarios.Scenario{}
	citing := map[string][]string{}
	for _, sc := range scs {
		byID[sc.ID] = sc
		for _, d := range sc.Decisions {
			citing[d] = append(citing[d], sc.ID)
		}
	}
	goldenRule(o, c, byID, r)
	decisionRule(c, cur, citing, passing, r)
	return nil
}

// changeSince reads what changed since o.Base.
func changeSince(o Options, cur *decisions.Set) (*change, error) {
	if _, err := git(o.Dir, "rev-parse", "--verify", o.Base+"^{commit}"); err != nil {
		return nil, fmt.Errorf("--base %s is not a commit in %s: %w", o.Base, o.Dir, err)
	}
	files, err := changedFiles(o.Dir, o.Base)
	if err != nil {
		return nil, err
	}
	before, err := baseDecisions(o.Dir, o.Base)
	if err != nil {
		return nil, err
	}
	c := &change{files: files, before: before, changed: map[string]bool{}, atBase: map[string]bool{}}
	for _, id := range cur.Order {
		d := cur.ByID[id]
		if old, ok := before[id]; !ok || old.Text != d.Text {
			c.changed[id] = true
		}
	}
	existed, err := git(o.Dir, "ls-tree", "--name-only", o.Base, GoldenDir+"/")
	if err != nil {
		return nil, err
	}
	existedScenarios, err := git(o.Dir, "ls-tree", "--name-only", o.Base, ScenarioDir+"/")
	if err != nil {
		return nil, err
	}
	for _, p := range strings.Fields(existed + "\n" + existedScenarios) {
		c.atBase[p] = true
	}
	return c, nil
}

// goldenRule: a changed golden needs a changed decision behind it. A
// golden added together with its new scenario is a new check, not a change.
func goldenRule(o Options, c *change, byID map[string]*scenarios.Scenario, r *Result) {
	var goldens []string
	for f := range c.files {
		if dir, name := path.Split(f); dir == GoldenDir+"/" && strings.HasSuffix(name, ".json") && name != trajectories.SchemaFile {
			goldens = append(goldens, strings.TrimSuffix(name, ".json"))
		}
	}
	sort.Strings(goldens)
	// A change of the trajectory format itself explains golden changes
	// that no decision does; the format's own history is the record.
	if c.files[GoldenDir+"/"+trajectories.SchemaFile] {
		if len(goldens) > 0 {
			r.Notes = append(r.Notes, fmt.Sprintf("%d goldens changed with trajectories/%s; review them as a format change", len(goldens), trajectories.SchemaFile))
		}
		return
	}
	for _, id := range goldens {
		sc, ok := byID[id]
		if !ok {
			continue // reported by the orphan rule, or a deleted scenario with its golden
		}
		if !c.atBase[GoldenDir+"/"+id+".json"] && !c.atBase[ScenarioDir+"/"+id+".yaml"] {
			r.Notes = append(r.Notes, fmt.Sprintf("new scenario %s with its golden", id))
			continue
		}
		if slices.ContainsFunc(sc.Decisions, func(d string) bool { return c.changed[d] }) {
			continue
		}
		if wordingOnly(o.Dir, o.Base, id) {
			r.Notes = append(r.Notes, fmt.Sprintf("golden %s changed only in implementation text (docs/trajectory-format.md): the reference's wording, which no decision fixes", id))
			continue
		}
		r.Problems = append(r.Problems, fmt.Sprintf("golden %s changed but none of its decisions (%s) changed; record why the behaviour changed in docs/design, or revert the golden", id, strings.Join(sc.Decisions, ", ")))
	}
}

// decisionRule: a changed or new decision must be checked by a scenario
// that changed with it or passes as it stands.
func decisionRule(c *change, cur *decisions.Set, citing map[string][]string, passing map[string]bool, r *Result) {
	var ids []string
	for id := range c.changed {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		d := cur.ByID[id]
		if !d.Accepted() {
			continue
		}
		cites := citing[id]
		sort.Strings(cites)
		ok := slices.ContainsFunc(cites, func(s string) bool {
			return c.files[ScenarioDir+"/"+s+".yaml"] || passing[s]
		})
		switch {
		case len(cites) == 0 && d.Level == "MUST":
			r.Problems = append(r.Problems, fmt.Sprintf("decision %s changed but no scenario cites it; add or update a scenario with an expect block that checks it", id))
		case len(cites) == 0:
			r.Notes = append(r.Notes, fmt.Sprintf("SHOULD decision %s changed and no scenario cites it", id))
		case !ok:
			r.Problems = append(r.Problems, fmt.Sprintf("decision %s changed but none of the scenarios citing it (%s) changed or passes", id, strings.Join(cites, ", ")))
		case d.Level == "MUST" && !slices.ContainsFunc(cites, func(s string) bool {
			return c.files[ScenarioDir+"/"+s+".yaml"] || c.files[GoldenDir+"/"+s+".json"]
		}) && (d.Reviewed == "" || d.Reviewed == c.before[id].Reviewed):
			// The scenarios pass as they stand, but they were written for
			// the old text: a MUST decision turned into its opposite would
			// pass here. Their review must be on record.
			r.Problems = append(r.Problems, fmt.Sprintf("MUST decision %s changed but none of the scenarios citing it (%s) nor their goldens changed; update them for the new text, or record that they still check it with a new `- reviewed: <date>, <what was checked>` line in the record (docs/design/README.md)", id, strings.Join(cites, ", ")))
		default:
			r.Notes = append(r.Notes, fmt.Sprintf("decision %s changed; checked by %s", id, strings.Join(cites, ", ")))
		}
	}
}

func upstreamRules(o Options, cur *decisions.Set, scs []*scenarios.Scenario, r *Result) error {
	lockPath := o.Lock
	if lockPath == "" {
		lockPath = filepath.Join(o.Dir, LockFile)
	}
	lock, err := upstream.ReadLock(lockPath)
	if err != nil {
		return err
	}
	up, err := upstream.ReadDir(o.Upstream)
	if err != nil {
		return err
	}
	entries := map[string]upstream.LockEntry{}
	for _, e := range lock.Decisions {
		entries[e.Key()] = e
	}
	citing := map[string][]string{}
	for _, sc := range scs {
		for _, d := range sc.Decisions {
			citing[d] = append(citing[d], sc.ID)
		}
	}
	seen := map[string]bool{}
	for _, d := range up {
		seen[d.Key()] = true
		e, ok := entries[d.Key()]
		switch {
		case !ok:
			r.Problems = append(r.Problems, fmt.Sprintf("upstream %s (%s:%d) is new and maps to no local decision; add a record with `- upstream: %s` to docs/design, then run polyloop-conform pin", d.Key(), d.File, d.Line, d.Key()))
		case len(e.Local) == 0:
			r.Problems = append(r.Problems, fmt.Sprintf("upstream %s maps to no local decision; add a record with `- upstream: %s` to docs/design, then run polyloop-conform pin", d.Key(), d.Key()))
		case e.SHA256 != d.Hash:
			r.Problems = append(r.Problems, fmt.Sprintf("upstream %s changed: revisit %s, scenarios %s; then run polyloop-conform pin", d.Key(), revisit(e.Local), scenarioList(e.Local, citing)))
		}
	}
	for _, e := range lock.Decisions {
		if !seen[e.Key()] {
			r.Problems = append(r.Problems, fmt.Sprintf("upstream %s is gone from %s: revisit %s (supersede or remove them), then run polyloop-conform pin", e.Key(), o.Upstream, revisit(e.Local)))
		}
	}
	for _, e := range lock.Decisions {
		for _, id := range e.Local {
			if _, ok := cur.ByID[id]; !ok {
				r.Problems = append(r.Problems, fmt.Sprintf("the upstream lock maps %s to %s, which docs/design no longer defines; run polyloop-conform pin", e.Key(), id))
			}
		}
	}
	return nil
}

// revisit names local IDs compactly: "0008.D4.* (0008.D4, 0008.D4.env-error)".
func revisit(ids []string) string {
	if len(ids) == 0 {
		return "(no local decision)"
	}
	root := ids[0]
	for _, id := range ids[1:] {
		for !strings.HasPrefix(id, root) {
			i := strings.LastIndexByte(root, '.')
			if i < 0 {
				root = ""
				break
			}
			root = root[:i]
		}
	}
	if len(ids) > 1 && strings.Contains(root, ".D") {
		return root + ".* (" + strings.Join(ids, ", ") + ")"
	}
	return strings.Join(ids, ", ")
}

func scenarioList(ids []string, citing map[string][]string) string {
	set := map[string]bool{}
	for _, id := range ids {
		for _, s := range citing[id] {
			set[s] = true
		}
	}
	var out []string
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	if len(out) == 0 {
		return "(none cite them)"
	}
	return strings.Join(out, ", ")
}
