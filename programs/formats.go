package programs

import (
	"fmt"
	"strings"

	"github.com/davinci-sim/davinci-sim/cluster"
	"github.com/davinci-sim/davinci-sim/machines"
)

// FormatsReference returns the key reference of the file formats in
// Markdown, generated from the types the files decode into: every program
// kind's keys (with the machine kinds it runs on) and every machine kind's
// keys. docs/formats.md holds it between its generated markers (a test
// keeps the two equal); `davinci-sim formats` prints it.
func FormatsReference() string {
	var b strings.Builder
	b.WriteString("### Program kinds\n\n")
	for _, k := range Kinds() {
		fmt.Fprintf(&b, "#### `kind: %s`\n\n%s. Runs on: %s. Example: `programs/examples/%s`.\n\n", k.Name, k.Summary,
			strings.Join(k.Machines, ", "), k.Example)
		if k.Params == nil {
			b.WriteString("(no key reference)\n\n")
			continue
		}
		table(&b, k.Keys())
	}
	b.WriteString("### Machine kinds\n\n")
	for _, k := range machines.Kinds() {
		fmt.Fprintf(&b, "#### `kind: %s`\n\n%s.\n\n", k.Name, k.Summary)
		keys, err := machines.KindKeys(k.Name)
		if err != nil {
			fmt.Fprintf(&b, "(%v)\n\n", err)
			continue
		}
		table(&b, keys)
	}
	b.WriteString("### Cluster and node descriptions\n\n")
	fmt.Fprintf(&b, "Given with `-m` (embedded: %s) to run lu-fused on many NPUs; `--set node.KEY=V` and `--set cluster.KEY=V` override their keys, `--set machine.KEY=V` each NPU's.\n\n", strings.Join(cluster.Names(), ", "))
	b.WriteString("#### Node description\n\n")
	table(&b, cluster.NodeKeys())
	b.WriteString("#### Cluster description\n\n")
	table(&b, cluster.ClusterKeys())
	return b.String()
}

func table(b *strings.Builder, keys []machines.Key) {
	b.WriteString("| key | value |\n|---|---|\n")
	for _, k := range keys {
		fmt.Fprintf(b, "| `%s` | %s |\n", k.Path, k.Type)
	}
	b.WriteString("\n")
}
