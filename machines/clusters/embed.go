// Package clusters holds the embedded cluster and node description files
// (cloudbrain2-node.yaml, cloudbrain2.yaml). It only embeds them: go:embed
// cannot reach a parent directory, so the files live here and package
// cluster (github.com/davinci-sim/davinci-sim/cluster) decodes, validates and
// uses them.
package clusters

import "embed"

// FS holds every *.yaml file of this directory.
//
//go:embed *.yaml
var FS embed.FS
