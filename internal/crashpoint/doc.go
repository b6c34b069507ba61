// Package crashpoint explores every journal write point of a scenario on
// any implementation: an uninterrupted run reports its journal points,
// then for each point the implementation is killed there, resumed in a new
// process, and the resume is judged against the uninterrupted run (0002).
//
// The exploration speaks to implementations through a Runner
// (*implproc.Client), so the reference is explored exactly like any other
// implementation, over serve-reference. Judge is a pure function of the
// scenario, the baseline, the point and what the resumed run did.
package crashpoint
