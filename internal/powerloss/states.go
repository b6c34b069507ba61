package powerloss

import (
	"sort"
)

// SomeStates lists a linear sample of the states a power cut now could
// leave, where States lists their product: every file's unsynced data
// lost together, and kept together; and each file alone in each of its
// states (its data lost, torn, kept; its name lost or its removal lost)
// with every other file kept, and kept alone with every other lost. A
// journal of several files (a database, its rollback journal, its write-
// ahead log and its shared index) multiplies States past what can be
// resumed; a record is lost by one file's state, which the sample holds.
func (d *Disk) SomeStates() []State {
	d.mu.Lock()
	defer d.mu.Unlock()
	paths := make([]string, 0, len(d.files))
	for p := range d.files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	options := make([][]fileState, len(paths))
	for i, p := range paths {
		options[i] = fileStates(p, d.files[p], d.TearInside, d.OneTear)
	}
	pick := func(choice func(i int) int) State {
		s := State{Files: map[string][]byte{}}
		for i, p := range paths {
			o := options[i][choice(i)]
			if o.present {
				s.Files[p] = o.data
			}
			if o.note != "" {
				if s.Note != "" {
					s.Note += "; "
				}
				s.Note += o.note
			}
		}
		return s
	}
	last := func(i int) int { return len(options[i]) - 1 }
	out := []State{pick(func(int) int { return 0 }), pick(last)}
	for i := range paths {
		for k := 0; k < len(options[i])-1; k++ {
			out = append(out, pick(func(j int) int {
				if j == i {
					return k
				}
				return last(j)
			}))
		}
		out = append(out, pick(func(j int) int {
			if j == i {
				return last(j)
			}
			return 0
		}))
	}
	return out
}
