package powerloss

import (
	"github.com/polyloop/polyloop-conform/internal/deviation"
	"github.com/polyloop/polyloop-conform/internal/refdriver"
	"github.com/polyloop/polyloop-conform/reference/tools"
)

func driver(d deviation.Set) refdriver.Options {
	return refdriver.Options{Schemas: &tools.SchemaCache{}, Deviations: d}
}
