package cluster

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode"

	"github.com/davinci-sim/davinci-sim/machines"
)

// YAML prints the effective description t — after loading, overriding and
// validation — as a description file that loads back to it: a node loaded
// alone (NodeOnly) as a node file, a cluster as a cluster file whose node:
// holds the node's keys inline. Every value is written in its unit
// (machines' unit types), keys set by --set carry a trailing "# --set"
// (cluster.* on the cluster's keys, node.* on the node's), and a value
// derived because the description leaves it out (the bridge's bandwidth)
// is written commented out with how it was derived, so that loading the
// output derives it again from the values in effect.
func (t *Topology) YAML() []byte {
	var b strings.Builder
	if t.nodeOnly {
		writeSection(&b, reflect.ValueOf(t.Node), "", 0, t.nodeAt)
		return []byte(b.String())
	}
	cf := clusterFile{Name: t.Name, Description: t.Description, Nodes: t.Nodes, Fabric: t.Fabric}
	v := reflect.ValueOf(cf)
	for i := range v.NumField() {
		key := tagKey(v.Type().Field(i))
		if key != "node" {
			writeField(&b, key, v.Field(i), key, 0, t.clusterAt)
			continue
		}
		b.WriteString("node:")
		if t.clusterAt.setAt("node") {
			b.WriteString("  # --set")
		}
		b.WriteString("\n")
		writeSection(&b, reflect.ValueOf(t.Node), "", 1, t.nodeAt)
	}
	return []byte(b.String())
}

// tagKey is a field's key in files (its mapstructure tag).
func tagKey(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
	return name
}

// setAt reports whether key (a lower-case path in the description) was
// set by --set.
func (l *located) setAt(key string) bool {
	if l == nil {
		return false
	}
	_, ok := l.set[strings.ToLower(key)]
	return ok
}

// derivedAt says how the value of key was derived ("": it was given).
func (l *located) derivedAt(key string) string {
	if l == nil {
		return ""
	}
	return l.derived[strings.ToLower(key)]
}

// writeSection writes the keys of struct v at path (dotted, "" for the
// top) indented by indent levels; at locates them.
func writeSection(b *strings.Builder, v reflect.Value, path string, indent int, at *located) {
	for i := range v.NumField() {
		key := tagKey(v.Type().Field(i))
		if key == "" || key == "-" {
			continue
		}
		p := key
		if path != "" {
			p = path + "." + key
		}
		writeField(b, key, v.Field(i), p, indent, at)
	}
}

// writeField writes one key: a section's keys below it, or its value.
func writeField(b *strings.Builder, key string, v reflect.Value, path string, indent int, at *located) {
	pad := strings.Repeat("  ", indent)
	if v.Kind() == reflect.Struct {
		fmt.Fprintf(b, "%s%s:\n", pad, key)
		writeSection(b, v, path, indent+1, at)
		return
	}
	if how := at.derivedAt(path); how != "" {
		// Commented out: a description that leaves the key out has it
		// derived again from the values in effect when loaded.
		fmt.Fprintf(b, "%s# %s: %s  (derived: %s; give %s: to fix it)\n", pad, key, machines.YAMLValue(v), oneLine(how), key)
		return
	}
	fmt.Fprintf(b, "%s%s: %s", pad, key, machines.YAMLValue(v))
	if at.setAt(path) {
		b.WriteString("  # --set")
	}
	b.WriteString("\n")
}

// oneLine keeps s on one comment line.
func oneLine(s string) string {
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

// Figures returns figures derived from t that a cluster designer wants at
// hand, one line each (the view's header): NPUs and hosts in all, the PCIe
// bandwidth in effect, the HCCS groups and the bridge between them, each
// NPU's and each node's network bandwidth, and the fabric's uplinks.
func (t *Topology) Figures() []string {
	n := t.Node
	var out []string
	hosts := n.Hosts.Count
	if t.nodeOnly {
		out = append(out, fmt.Sprintf("one node of %d × %s NPUs and %d hosts (%d cores, %d × %v of DRAM)",
			n.NPUs, n.NPU, hosts, hosts*n.Hosts.Cores, hosts, n.Hosts.Memory))
	} else {
		out = append(out, fmt.Sprintf("%d nodes × %d NPUs = %d × %s NPUs; %d hosts (per node %d cores, %d × %v of DRAM)",
			t.Nodes, n.NPUs, t.NPUs(), n.NPU, t.Nodes*hosts, hosts*n.Hosts.Cores, hosts, n.Hosts.Memory))
	}
	out = append(out, fmt.Sprintf("PCIe in effect: Gen%d, %v per NPU per direction (pcie.gen%d_bandwidth)",
		n.PCIe.Generation, n.PCIe.Bandwidth(), n.PCIe.Generation))
	g := t.groupSize()
	groups := (n.NPUs + g - 1) / g
	plural := "s"
	if groups == 1 {
		plural = ""
	}
	hccs := fmt.Sprintf("HCCS: %d group%s of %d NPUs, each NPU %d × %v = %v to its group",
		groups, plural, g, g-1, n.HCCS.LinkBandwidth, n.HCCS.LinkBandwidth*machines.Bandwidth(g-1))
	if groups > 1 {
		how := "given"
		if t.nodeAt.derivedAt(bridgeKey) != "" {
			how = fmt.Sprintf("%d × pcie.gen%d_bandwidth", g, n.PCIe.Generation)
		}
		hccs += fmt.Sprintf("; bridge between groups %v (%s)", n.InterGroup.Bandwidth, how)
	} else {
		hccs += "; no bridge crossed (one group)"
	}
	out = append(out, hccs)
	if t.nodeOnly {
		out = append(out, fmt.Sprintf("RoCE: %v per NPU, %v per node (no fabric: a node alone)",
			n.RoCE.Bandwidth, n.RoCE.Bandwidth*machines.Bandwidth(n.NPUs)))
		return out
	}
	nic, by := n.RoCE.Bandwidth, "node.roce.bandwidth"
	if f := t.Fabric.PortBandwidth; f < nic {
		nic, by = f, "cluster.fabric.port_bandwidth"
	}
	node := nic * machines.Bandwidth(n.NPUs)
	uplink := fmt.Sprintf("node uplink %v (÷ oversubscription %g)", node/machines.Bandwidth(t.Fabric.Oversubscription), t.Fabric.Oversubscription)
	if t.Nodes == 1 {
		uplink = "no node uplink crossed (one node)"
	}
	out = append(out, fmt.Sprintf("network: %v per NPU (%s, the smaller of roce.bandwidth and fabric.port_bandwidth), %v per node; %s",
		nic, by, node, uplink))
	if s := t.Fabric.Supernodes; s > 1 {
		per := (t.Nodes + s - 1) / s
		out = append(out, fmt.Sprintf("supernodes: %d of up to %d nodes; spine uplink of a full one %v (÷ spine oversubscription %g)",
			s, per, nic*machines.Bandwidth(per*n.NPUs)/machines.Bandwidth(t.Fabric.SpineOversubscription), t.Fabric.SpineOversubscription))
	}
	return out
}
