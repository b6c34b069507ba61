package trajectories

// docFile is the format's page. Its field table and presence table are
// generated blocks (internal/docgen, refreshed by
// go test ./docs -run TestGeneratedBlocks -args -update); the tests here
// hold its vocabulary sections to the schema.
const docFile = "../docs/trajectory-format.md"
