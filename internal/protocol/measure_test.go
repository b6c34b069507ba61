package protocol_test

import (
	"strings"
	"testing"
)

// TestExchangeWeighsTheMeasure: the runner's measure is not the default
// one, so the reference's context sizes on the wire are not the golden's
// code points, and the run passes all the same: the engine holds them to
// the runner's answers and judges the golden in code points.
func TestExchangeWeighsTheMeasure(t *testing.T) {
	d := &pipeDriver{t: t, log: &lineLog{}}
	res := run(t, d, "context.size-per-block")
	if !res.Passed() {
		t.Fatalf("not passed: %v", res.Messages())
	}
	if !d.log.has("> ", `"type":"measure_result"`) || d.log.has("< ", `"context_size":7,`) {
		t.Errorf("the runner's measure answered in code points (step 1 is 7 of them):\n%s", strings.Join(d.log.lines, "\n"))
	}
	if got := res.Trajectory.Steps[0].ContextSize; got != 7 {
		t.Errorf("judged context_size %d, want the golden's 7", got)
	}
}

// TestExchangeHoldsSizesToTheAnswers: a kernel that reports the default
// measure's size although the runner measured fails, naming the sum of
// the runner's answers.
func TestExchangeHoldsSizesToTheAnswers(t *testing.T) {
	d := &pipeDriver{t: t, log: &lineLog{}, tamper: rewrite(`"context_size":\d+`, `"context_size":7`)}
	res := run(t, d, "context.size-per-block")
	if msg := strings.Join(res.Messages(), "\n"); res.Passed() || !strings.Contains(msg, "step 1: the trajectory says context_size 7; the runner's size measure answered") {
		t.Errorf("want the size held to the runner's answers, got passed=%v: %s", res.Passed(), msg)
	}
}
