package implproc

import (
	"context"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/internal/protocol"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// ResumeOn resumes x on new processes started from Command, after its run
// stopped somewhere that is none of this client's processes (internal/inproc
// runs it in the test's own process): the resume gets what RunWith gives
// its own, a new process, isolated where the machine allows, and a third
// after a second crash. wait ends it (the scenario's deadline). x.Resumes
// must have said that the run resumes.
func (c *Client) ResumeOn(wait context.Context, x *protocol.Exchange, sc *scenarios.Scenario, env *fakes.Env) (*trajectories.Trajectory, error) {
	tr := c.newTranscript(sc.ID)
	defer tr.flush()
	running := &runningChild{}
	defer context.AfterFunc(wait, running.signal)()
	return c.resume(x, sc, env, tr, running)
}
