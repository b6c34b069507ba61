package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// chromium finds a headless-capable browser. CI sets
// POLYLOOP_REQUIRE_BROWSER=1 (and installs Debian's chromium), so there a
// missing browser fails instead of skipping.
func chromium(t *testing.T) string {
	t.Helper()
	// A browser start costs seconds of CPU on 2 cores: the rendered page is
	// a product check. The page's content is pinned without a browser by
	// the report package's HTML tests.
	requireLong(t, "opens the report in headless Chromium")
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("POLYLOOP_REQUIRE_BROWSER") == "1" {
		t.Fatal("no chromium on PATH; .ci/run installs it with apt-get install chromium")
	}
	t.Skip("no chromium on PATH (CI installs it and sets POLYLOOP_REQUIRE_BROWSER=1)")
	return ""
}

func headless(t *testing.T, browser string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(browser, append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run", "--user-data-dir=" + t.TempDir()}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.Output(); close(done) }()
	select {
	case <-done:
	case <-time.After(90 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatal("chromium did not finish within 90 s")
	}
	if err != nil {
		t.Fatalf("chromium %v: %v", args, err)
	}
	return out
}

// TestHTMLReportInChromium opens the HTML report of a real run (the
// off-by-one kernel: 87 failures, the "readable with 100" case) in
// headless Chromium and checks the rendered page: the counts agree with
// the JSON report of the same run, a mismatched field is marked, and the
// filter (driven here by the URL fragment, as a shared link would) hides
// every row that does not fail. A screenshot is kept in
// $POLYLOOP_ARTEFACTS when set.
func TestHTMLReportInChromium(t *testing.T) {
	t.Parallel()
	browser := chromium(t)
	selfImpl(t)
	dir := t.TempDir()
	page, data := filepath.Join(dir, "report.html"), filepath.Join(dir, "report.json")
	// One run, written as JSON (the oracle for the counts) and turned into
	// the page by merge, which writes any format from JSON reports.
	args := []string{"run", "--impl", "sh testdata/impls/context-size-off-by-one.sh", "-p", "4", "--run", "context.*,budget.*,outcome.*,parse.*,history.*,govdoc.*"}
	if code, out, errs := runBuilt(t, append(args, "--format", "json", "--out", data)...); code != ExitFail {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if code, out, errs := run(t, "merge", "--format", "html", "--out", page, data); code != ExitFail {
		t.Fatalf("merge to html: exit %d\n%s\n%s", code, out, errs)
	}
	var rep struct {
		Counts struct{ Passed, Failed int } `json:"counts"`
	}
	raw, _ := os.ReadFile(data)
	if err := json.Unmarshal(raw, &rep); err != nil || rep.Counts.Failed == 0 {
		t.Fatalf("json report: %v %+v", err, rep.Counts)
	}
	html, _ := os.ReadFile(page)
	if strings.Contains(string(html), "http://") || strings.Contains(string(html), "https://") || strings.Contains(string(html), "<link") {
		t.Error("the report refers to something outside itself")
	}

	dom := string(headless(t, browser, "--virtual-time-budget=3000", "--dump-dom", "file://"+page+"#show=fail"))
	count := func(pattern string) int {
		m := regexp.MustCompile(pattern).FindStringSubmatch(dom)
		if m == nil {
			t.Fatalf("rendered page lacks %s", pattern)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	if got := count(`data-count="failed">(\d+) failed<`); got != rep.Counts.Failed {
		t.Errorf("page shows %d failed, the run failed %d", got, rep.Counts.Failed)
	}
	if got := count(`data-count="passed">(\d+) passed<`); got != rep.Counts.Passed {
		t.Errorf("page shows %d passed, the run passed %d", got, rep.Counts.Passed)
	}
	if !regexp.MustCompile(`<mark data-path="steps\[\d+\]\.context_size">`).MatchString(dom) || !strings.Contains(dom, `<span class="want">`) {
		t.Error("no mismatched context_size field is marked with its wanted value")
	}
	if got := count(`<output id="shown"[^>]*>(\d+) shown</output>`); got != rep.Counts.Failed {
		t.Errorf("the failing filter shows %d rows, want %d", got, rep.Counts.Failed)
	}
	hiddenPass := len(regexp.MustCompile(`<li class="row" [^>]*data-verdict="pass"[^>]*hidden=""`).FindAllString(dom, -1))
	if hiddenPass != rep.Counts.Passed {
		t.Errorf("the failing filter hid %d passing rows, want %d", hiddenPass, rep.Counts.Passed)
	}
	if n := len(regexp.MustCompile(`<li class="row" [^>]*data-verdict="fail"[^>]*hidden=""`).FindAllString(dom, -1)); n != 0 {
		t.Errorf("the failing filter hid %d failing rows", n)
	}

	shot := filepath.Join(dir, "report.png")
	if a := os.Getenv("POLYLOOP_ARTEFACTS"); a != "" {
		if err := os.MkdirAll(a, 0o755); err != nil {
			t.Fatal(err)
		}
		shot = filepath.Join(a, "report.png")
	}
	headless(t, browser, "--window-size=1280,2400", "--virtual-time-budget=3000", "--screenshot="+shot, "file://"+page+"#show=fail")
	if st, err := os.Stat(shot); err != nil || st.Size() < 10_000 {
		t.Errorf("no screenshot at %s: %v", shot, err)
	}
}

// TestCoverageHTMLInChromium renders coverage --format html and checks
// the page against coverage --format json: the number of covered MUST
// decisions, and the "without scenarios" filter showing exactly the
// decisions no scenario cites.
func TestCoverageHTMLInChromium(t *testing.T) {
	t.Parallel()
	browser := chromium(t)
	dir := t.TempDir()
	page, data := filepath.Join(dir, "coverage.html"), filepath.Join(dir, "coverage.json")
	run(t, "coverage", "--format", "html", "--out", page)
	run(t, "coverage", "--format", "json", "--out", data)
	var cov struct {
		Rows []struct {
			Level, Status string
			Scenarios     []string
		} `json:"decisions"`
	}
	raw, _ := os.ReadFile(data)
	if err := json.Unmarshal(raw, &cov); err != nil || len(cov.Rows) == 0 {
		t.Fatalf("coverage json: %v", err)
	}
	must, covered, uncited := 0, 0, 0
	for _, r := range cov.Rows {
		if len(r.Scenarios) == 0 {
			uncited++
		}
		if r.Level == "MUST" && r.Status == "accepted" {
			must++
			if len(r.Scenarios) > 0 {
				covered++
			}
		}
	}
	dom := string(headless(t, browser, "--virtual-time-budget=3000", "--dump-dom", "file://"+page+"#show=uncovered"))
	want := fmt.Sprintf(`data-count="must-covered">%d of %d accepted MUST decisions have scenarios<`, covered, must)
	if !strings.Contains(dom, want) {
		t.Errorf("rendered page lacks %s", want)
	}
	m := regexp.MustCompile(`<output id="shown"[^>]*>(\d+) shown</output>`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatal("rendered page has no count of shown rows")
	}
	if n, _ := strconv.Atoi(m[1]); n != uncited || uncited == 0 {
		t.Errorf("the filter shows %d decisions without scenarios, want %d (and some)", n, uncited)
	}
	if got := strings.Count(dom, `<td class="on"`); got == 0 {
		t.Error("the grid marks no scenario citing a decision")
	}
}

// TestHTMLReportRendersChinese: GovDoc's scenarios carry Chinese text, so
// the report's fonts must render it. A failing run of the real GovDoc
// scenarios is turned into the page; the page must contain Chinese, and a
// probe page with the report's own style sheet draws two different
// Chinese characters and a private-use one on canvases in the body's
// font: with a CJK font the three bitmaps differ, with none they are the
// same empty box. CI installs Debian's fonts-noto-cjk.
func TestHTMLReportRendersChinese(t *testing.T) {
	t.Parallel()
	browser := chromium(t)
	selfImpl(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	if code, out, errs := runBuilt(t, "run", "--impl", "sh testdata/impls/context-size-off-by-one.sh", "--run", "govdoc.real-*", "--format", "html", "--out", page); code != ExitFail {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	html, _ := os.ReadFile(page)
	if !regexp.MustCompile(`\p{Han}`).Match(html) {
		t.Fatal("the report of the GovDoc scenarios shows no Chinese text")
	}
	style := regexp.MustCompile(`(?s)<style>.*?</style>`).Find(html)
	if style == nil {
		t.Fatal("the report has no style sheet")
	}
	probe := filepath.Join(dir, "probe.html")
	script := `<script>
function draw(ch) {
  var c = document.createElement('canvas'); c.width = 48; c.height = 48;
  var x = c.getContext('2d'); x.font = '36px ' + getComputedStyle(document.body).fontFamily;
  x.fillText(ch, 4, 40); return c.toDataURL();
}
var a = draw('\u5408'), b = draw('\u89c4'), pua = draw('\ue000');
document.getElementById('out').textContent = (a !== b && a !== pua) ? 'glyphs' : 'boxes';
</script>`
	body := "<!doctype html><html><head><meta charset=\"utf-8\">" + string(style) + "</head><body><p id=\"out\">not run</p>" + script + "</body></html>"
	if err := os.WriteFile(probe, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := string(headless(t, browser, "--virtual-time-budget=2000", "--dump-dom", "file://"+probe))
	if !strings.Contains(dom, `<p id="out">glyphs</p>`) {
		t.Errorf("Chinese renders as empty boxes with the report's fonts (install fonts-noto-cjk):\n%s", dom)
	}
}
