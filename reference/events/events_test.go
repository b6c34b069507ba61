package events

import (
	"errors"
	"testing"
)

func TestStream_0011_D2_failingSinksDoNotStopDelivery(t *testing.T) {
	rec := &Recorder{}
	s := NewStream(
		SinkFunc(func(Event) error { panic("bug") }),
		SinkFunc(func(Event) error { return errors.New("down") }),
		nil,
		rec,
	)
	for i := 0; i < 3; i++ {
		s.Emit(Event{Type: TypeModelStep, Step: i + 1})
	}
	n, last := s.Failures()
	if n != 6 || last == nil {
		t.Errorf("failures = %d (%v), want 6", n, last)
	}
	if got := len(rec.Events()); got != 3 {
		t.Errorf("recorder got %d events after failing sinks, want 3", got)
	}
	var nilStream *Stream
	nilStream.Emit(Event{}) // must not panic
}
