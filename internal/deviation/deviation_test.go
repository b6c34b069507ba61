package deviation

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/polyloop/polyloop-conform/reference/assembly"
	"github.com/polyloop/polyloop-conform/reference/run"
)

// Every row of the table must make the reference depart somehow: a row
// whose Wrap is empty is a deviation selfcheck can never kill.
func TestEveryDeviationWrapsASeam(t *testing.T) {
	for _, d := range All() {
		if reflect.ValueOf(d.wrap).IsZero() {
			t.Errorf("deviation %s wraps no seam", d.Name)
		}
		if d.Decision == "" || d.What == "" {
			t.Errorf("deviation %s: the decision it breaks and what it does are both required", d.Name)
		}
	}
}

func TestEmptySetChangesNothing(t *testing.T) {
	s := Set{}.Seams()
	o := run.Options{}
	s.Options(&o)
	if !reflect.ValueOf(o).IsZero() {
		t.Errorf("an empty set changed the options: %+v", o)
	}
	c := run.RequestConfig{}
	if err := s.Request(&c, run.RequestConfig{}); err != nil || !reflect.ValueOf(c).IsZero() {
		t.Errorf("an empty set changed the request: %+v, %v", c, err)
	}
	if s.Abandon() {
		t.Error("an empty set abandons cancelled calls")
	}
	if s.SinkCountPerPhase() {
		t.Error("an empty set counts sink failures per phase")
	}
}

func TestModelFailureRetriedCallsOnceMore(t *testing.T) {
	calls := 0
	m := run.ModelFunc(func(context.Context, []assembly.Message) (string, error) {
		calls++
		if calls == 1 {
			return "", errors.New("overloaded")
		}
		return "ok", nil
	})
	o := run.Options{Model: m}
	Set{ModelFailureRetried: true}.Seams().Options(&o)
	out, err := o.Model.Complete(context.Background(), nil)
	if out != "ok" || err != nil || calls != 2 {
		t.Errorf("got %q, %v after %d calls; want ok after 2", out, err, calls)
	}
}

func TestParseRefusesUnknownNames(t *testing.T) {
	if _, err := Parse("no-such-deviation"); err == nil {
		t.Error("Parse accepted a name that is no deviation")
	}
	s, err := Parse(string(CancelNotReleased))
	if err != nil || !s.Seams().Abandon() {
		t.Errorf("Parse(%s) = %v, %v; want a set that abandons cancelled calls", CancelNotReleased, s, err)
	}
}

// TestSeamsOnlyOfDeviationsTurnedOn: a name present but turned off adds
// no seam (the short cut for the design's run must not read presence as
// on), and one turned on adds exactly its own.
func TestSeamsOnlyOfDeviationsTurnedOn(t *testing.T) {
	if n := len(Set{ModelFailureRetried: false}.Seams().wraps); n != 0 {
		t.Errorf("a deviation turned off added %d seams", n)
	}
	if n := len(Set{ModelFailureRetried: true, NeverReplayed: false}.Seams().wraps); n != 1 {
		t.Errorf("one deviation turned on added %d seams, want 1", n)
	}
}
