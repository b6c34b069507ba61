module example.com/polyloop-kernel

go 1.26.8

require github.com/polyloop/polyloop-conform v0.0.0

require (
	github.com/dlclark/regexp2/v2 v2.13.3 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/sys v0.46.0 // indirect
	golang.org/x/text v0.38.0 // indirect
)

// The suite's module is not published: the example builds against the
// tree it sits in.
replace github.com/polyloop/polyloop-conform => ../..
