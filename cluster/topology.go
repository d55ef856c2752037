package cluster

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/machines/clusters"
)

// Link is one kind of interconnect link as a file describes it: a bandwidth per direction and a
// latency. A transfer of B bytes alone on a route of such links takes the sum of their latencies
// plus B over the smallest bandwidth.
type Link struct {
	// Bandwidth is bytes per second, per direction.
	Bandwidth machines.Bandwidth `mapstructure:"bandwidth"`
	// LatencyNS is the latency in nanoseconds.
	LatencyNS float64 `mapstructure:"latency_ns"`
}

// Hosts describes a node's host CPUs (sockets).
type Hosts struct {
	// Count is the number of host CPUs (sockets) per node.
	Count int `mapstructure:"count"`
	// Cores is the number of cores per host.
	Cores int `mapstructure:"cores"`
	// Clock is the core clock.
	Clock machines.Frequency `mapstructure:"clock"`
	// MemoryBandwidth is one host's DRAM bandwidth.
	MemoryBandwidth machines.Bandwidth `mapstructure:"memory_bandwidth"`
	// Memory is one host's DRAM capacity.
	Memory machines.Size `mapstructure:"memory"`
	// SMP is the link between two hosts of one node (one per ordered pair).
	SMP Link `mapstructure:"smp"`
}

// PCIe is the host link of each NPU. Generation selects which of the two bandwidths is used.
type PCIe struct {
	// Generation is 3 or 4.
	Generation int `mapstructure:"generation"`
	// Gen3Bandwidth is the per-direction bandwidth of a PCIe 3.0 x16 link.
	Gen3Bandwidth machines.Bandwidth `mapstructure:"gen3_bandwidth"`
	// Gen4Bandwidth is the per-direction bandwidth of a PCIe 4.0 x16 link.
	Gen4Bandwidth machines.Bandwidth `mapstructure:"gen4_bandwidth"`
	// LatencyNS is the latency of one PCIe link traversal in nanoseconds.
	LatencyNS float64 `mapstructure:"latency_ns"`
}

// Bandwidth returns the bandwidth of the selected generation.
func (p PCIe) Bandwidth() machines.Bandwidth {
	if p.Generation == 4 {
		return p.Gen4Bandwidth
	}
	return p.Gen3Bandwidth
}

// HCCS describes the NPU groups of a node: full meshes of GroupSize NPUs, one HCCS link per ordered
// pair of NPUs in a group.
type HCCS struct {
	// GroupSize is the number of NPUs per full-mesh group.
	GroupSize int `mapstructure:"group_size"`
	// LinkBandwidth is one HCCS link's bandwidth per direction.
	LinkBandwidth machines.Bandwidth `mapstructure:"link_bandwidth"`
	// LatencyNS is one HCCS link's latency in nanoseconds.
	LatencyNS float64 `mapstructure:"latency_ns"`
}

// Collectives holds the collective algorithm choices and the reduction costs (γ).
type Collectives struct {
	// IntraServer is auto, mesh or ring.
	IntraServer string `mapstructure:"intra_server"`
	// InterServer is auto, ring or hd.
	InterServer string `mapstructure:"inter_server"`
	// HostBcast is binomial or ring.
	HostBcast string `mapstructure:"host_bcast"`
	// NPUReduceBandwidth is the bytes per second an NPU reduces (γ = 1 / it).
	NPUReduceBandwidth machines.Bandwidth `mapstructure:"npu_reduce_bandwidth"`
	// HostReduceBandwidth is the bytes per second a host reduces.
	HostReduceBandwidth machines.Bandwidth `mapstructure:"host_reduce_bandwidth"`
}

// Node is one server: NPUs, hosts and the links between them (cloudbrain2-node.yaml).
type Node struct {
	// Name names the node description.
	Name string `mapstructure:"name"`
	// Description is a one-line summary.
	Description string `mapstructure:"description"`
	// NPU is the name of the NPU machine file (package machines), e.g. ascend-910a.
	NPU string `mapstructure:"npu"`
	// NPUs is the number of NPUs per node: 1, 2, 4 or 8.
	NPUs int `mapstructure:"npus"`
	// Hosts are the node's host CPUs.
	Hosts Hosts `mapstructure:"hosts"`
	// PCIe is each NPU's link to its host.
	PCIe PCIe `mapstructure:"pcie"`
	// HCCS are the full-mesh NPU groups.
	HCCS HCCS `mapstructure:"hccs"`
	// InterGroup is the bridge between two HCCS groups (crossed between the two PCIe links). A
	// description may leave out its bandwidth: it is then what the PCIe links of one group carry
	// at once in the selected generation (BridgeBandwidth), filled in when the node is loaded.
	InterGroup Link `mapstructure:"inter_group"`
	// RoCE is each NPU's network port to the cluster fabric.
	RoCE Link `mapstructure:"roce"`
	// HostNetwork is each host's port to the MPI network.
	HostNetwork Link `mapstructure:"host_network"`
	// Collectives are the algorithm choices and reduction costs.
	Collectives Collectives `mapstructure:"collectives"`
}

// bridgeKey is the one value key a node description may leave out: the bridge's bandwidth,
// derived then from the PCIe links (BridgeBandwidth).
const bridgeKey = "inter_group.bandwidth"

// BridgeBandwidth is the bridge's bandwidth when a node description does not give
// inter_group.bandwidth: what the PCIe x16 links of one HCCS group can send at once in the
// selected generation, min(hccs.group_size, npus) × pcie.Bandwidth() — 4 × 15.75 = 63 GB/s at
// Gen3, 4 × 31.5 = 126 GB/s at Gen4. CLUSTER-FACTS §1.2 does not publish the bridge's bandwidth
// and says the per-NPU PCIe links bound a transfer between the groups, so the bridge is not made
// a tighter bottleneck than those links without evidence.
func (n *Node) BridgeBandwidth() machines.Bandwidth {
	return machines.Bandwidth(float64(min(n.HCCS.GroupSize, n.NPUs)) * float64(n.PCIe.Bandwidth()))
}

// bridgeRule says how BridgeBandwidth was formed, for messages.
func (n *Node) bridgeRule() string {
	return fmt.Sprintf("not given, so %d × pcie.gen%d_bandwidth = %v, what one HCCS group's PCIe links carry at once",
		min(n.HCCS.GroupSize, n.NPUs), n.PCIe.Generation, n.BridgeBandwidth())
}

// Fabric is the switch network joining the nodes' RoCE ports.
type Fabric struct {
	// PortBandwidth is a switch port's bandwidth; a NIC link runs at the smaller of it and roce.bandwidth.
	PortBandwidth machines.Bandwidth `mapstructure:"port_bandwidth"`
	// LatencyNS is the switch latency inside a supernode, in nanoseconds.
	LatencyNS float64 `mapstructure:"latency_ns"`
	// Oversubscription divides a node's uplink: its bandwidth is npus × port / oversubscription.
	Oversubscription float64 `mapstructure:"oversubscription"`
	// Supernodes is the number of contiguous blocks the nodes are spread over.
	Supernodes int `mapstructure:"supernodes"`
	// SpineOversubscription divides a supernode's uplink to the spine.
	SpineOversubscription float64 `mapstructure:"spine_oversubscription"`
	// SpineLatencyNS is the latency added between supernodes, in nanoseconds.
	SpineLatencyNS float64 `mapstructure:"spine_latency_ns"`
}

// clusterFile is the layout of a cluster file (cloudbrain2.yaml) that names
// its node description; inlineClusterFile is that of one holding it inline.
type clusterFile struct {
	Name        string `mapstructure:"name"`
	Description string `mapstructure:"description"`
	Node        string `mapstructure:"node"`
	Nodes       int    `mapstructure:"nodes"`
	Fabric      Fabric `mapstructure:"fabric"`
}

// Topology is a loaded and validated cluster: Nodes copies of Node on Fabric.
type Topology struct {
	// Name names the cluster description.
	Name string
	// Description is a one-line summary.
	Description string
	// Node describes every node.
	Node Node
	// Nodes is the number of nodes.
	Nodes int
	// Fabric joins the nodes.
	Fabric Fabric

	// nodeAt and clusterAt say where each key of the node and cluster
	// descriptions was given (nil: not loaded from files); origin holds
	// the keys whose value came from elsewhere (SetOrigin).
	nodeAt, clusterAt *located
	origin            map[string]string
	// nodeOnly marks a node description loaded alone (LoadSystem): a
	// cluster of one node without a fabric, whose view is a node file.
	nodeOnly bool
}

// NodeOnly reports whether t is a node description loaded alone
// (LoadSystem of a node file): one node, no fabric; its YAML is a node
// file, not a cluster file.
func (t *Topology) NodeOnly() bool { return t.nodeOnly }

// Files returns the files on disk the description was read from: the
// cluster file and the node file it names, unless the cluster file gives
// its node inline (embedded descriptions are none).
func (t *Topology) Files() []string {
	var out []string
	for _, l := range []*located{t.clusterAt, t.nodeAt} {
		if l != nil && l.file != "" && !slices.Contains(out, l.file) { // (an inline node is in the cluster's file)
			out = append(out, l.file)
		}
	}
	return out
}

// Origin says where the value of key — "node.<path>" for the node
// description, "cluster.<path>" for the cluster's — was given, for
// messages about it: "FILE:LINE: key \"PATH\"" or "--set node.PATH=V: key
// \"PATH\"" (the key as that file names it: node.PATH for a node given
// inline in its cluster's file).
func (t *Topology) Origin(key string) string {
	if o, ok := t.origin[strings.ToLower(key)]; ok {
		return o
	}
	for _, d := range []struct {
		prefix string
		at     *located
	}{{"node.", t.nodeAt}, {"cluster.", t.clusterAt}} {
		if rest, ok := strings.CutPrefix(key, d.prefix); ok && d.at != nil {
			return fmt.Sprintf("%s: key %q", d.at.where(rest), d.at.keyPrefix+rest)
		}
	}
	return fmt.Sprintf("key %q", key)
}

// SetOrigin records that the value of key ("node.<path>" or
// "cluster.<path>") came from elsewhere than the descriptions (a chip's
// machine file): Origin returns origin for it.
func (t *Topology) SetOrigin(key, origin string) {
	if t.origin == nil {
		t.origin = map[string]string{}
	}
	t.origin[strings.ToLower(key)] = origin
}

// MaxNodes bounds nodes: Cloud Brain II has 4096 NPUs in 512 servers (CLUSTER-FACTS §1.5).
const MaxNodes = 512

// Algorithm names accepted in files.
var (
	intraNames = []string{"auto", "mesh", "ring"}
	interNames = []string{"auto", "ring", "hd"}
	hostNames  = []string{"binomial", "ring"}
)

// Names lists the embedded cluster and node descriptions, sorted.
func Names() []string { return machines.YAMLNames(clusters.FS) }

// NodeKeys lists the keys of a node description (cloudbrain2-node.yaml),
// as --set node.KEY addresses them.
func NodeKeys() []machines.Key { return machines.Keys(reflect.TypeFor[Node]()) }

// ClusterKeys lists the keys of a cluster description (cloudbrain2.yaml),
// as --set cluster.KEY addresses them.
//
// Its node takes a name or file, or the node description inline (a
// mapping of a node description's keys): the struct a named node decodes
// into says string alone.
func ClusterKeys() []machines.Key {
	keys := machines.Keys(reflect.TypeFor[clusterFile]())
	for i := range keys {
		if keys[i].Path == "node" {
			keys[i].Type = "string or map (a node description's name or file, or the node inline)"
		}
	}
	return keys
}

// NameDescriptions returns err, where it is machines.Load's refusal of an
// unknown name, listing the cluster and node descriptions too: where a
// machine goes (-m), so can they.
func NameDescriptions(err error) error {
	var unknown *machines.UnknownError
	if errors.As(err, &unknown) {
		unknown.Also = "a cluster or node description (" + strings.Join(Names(), ", ") + ")"
	}
	return err
}

// Source returns the YAML text (with its comments) of an embedded description.
func Source(name string) ([]byte, error) {
	if !slices.Contains(Names(), name) {
		return nil, badinput.Wrap(fmt.Errorf("unknown cluster description %+q (embedded: %s)", name, strings.Join(Names(), ", ")))
	}
	return clusters.FS.ReadFile(name + ".yaml")
}

// description is a description's text read and parsed once: the name
// messages use for it, its path on disk ("": embedded) and its keys.
type description struct {
	source, path string
	c            *machines.Config
}

// readDescription reads an embedded description or a file (read) and
// parses it with the project's loader; a text that does not parse is
// refused with the loader's message.
func readDescription(nameOrPath, dir, what string) (*description, error) {
	data, source, path, err := read(nameOrPath, dir, what)
	if err != nil {
		return nil, err
	}
	return parseDescription(data, source, path)
}

// parseDescription parses text read from source (path on disk).
func parseDescription(data []byte, source, path string) (*description, error) {
	c, err := machines.ReadYAML(source, data)
	if err != nil {
		return nil, err
	}
	return &description{source: source, path: path, c: c}, nil
}

// has reports whether the description writes top-level key (any case).
func (d *description) has(key string) bool { return d.c.Line(key) > 0 }

// read returns the text of an embedded description or a file, and the name messages use for it.
func read(nameOrPath, dir, what string) (data []byte, source, path string, err error) {
	if slices.Contains(Names(), nameOrPath) {
		data, err = Source(nameOrPath)
		return data, nameOrPath + ".yaml", "", err
	}
	p := nameOrPath
	if dir != "" && !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	data, err = machines.ReadFile(p, what)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && !strings.ContainsAny(nameOrPath, `/\`) && filepath.Ext(nameOrPath) == "" {
			err = fmt.Errorf("unknown %s %+q: not an embedded description (%s) nor a file", what, nameOrPath, strings.Join(Names(), ", "))
			if slices.Contains(machines.Names(), nameOrPath) {
				err = fmt.Errorf("%w; %s is a chip's machine, which a node description names with npu:", err, nameOrPath)
			}
		}
		return nil, "", "", err
	}
	return data, p, p, nil
}

// Load reads a cluster — an embedded name such as "cloudbrain2" or the path of a YAML file — and
// the node file it names (or the node it holds inline: node: a mapping of a node description's
// keys, as Topology.YAML writes it), applies the overrides whose path starts with "cluster." (to the cluster
// file, e.g. cluster.nodes=4) or "node." (to the node file, e.g. node.pcie.generation=4), decodes
// both strictly and validates them. Every error is bad input (package badinput) and names the
// file, line and key, or the --set that caused it.
func Load(nameOrPath string, overrides []machines.Override) (*Topology, error) {
	t, err := load(nameOrPath, overrides)
	return t, badinput.Wrap(err)
}

func load(nameOrPath string, overrides []machines.Override) (*Topology, error) {
	d, err := readDescription(nameOrPath, "", "cluster file")
	if err != nil {
		return nil, err
	}
	return loadCluster(d, overrides)
}

// loadCluster is load on a description read.
func loadCluster(d *description, overrides []machines.Override) (*Topology, error) {
	if inline, ok := d.inlineNode(); ok {
		return loadInline(d, inline, overrides)
	}
	var cf clusterFile
	cl, err := decode(d, &cf, "cluster", overrides)
	if err != nil {
		return nil, err
	}
	dir := ""
	if d.path != "" {
		dir = filepath.Dir(d.path)
	}
	if cf.Node == "" {
		return nil, cl.errorf("node", "must name a node description (e.g. cloudbrain2-node) or hold one inline (a mapping of its keys)")
	}
	node, nl, err := loadNode(cf.Node, dir, overrides, cl)
	if err != nil {
		return nil, err
	}
	t := &Topology{Name: cf.Name, Description: cf.Description, Node: *node, Nodes: cf.Nodes, Fabric: cf.Fabric, nodeAt: nl, clusterAt: cl}
	if t.Name == "" {
		t.Name = strings.TrimSuffix(filepath.Base(d.source), filepath.Ext(d.source))
	}
	if err := nl.report(nodeProblems(node, nl)); err != nil {
		return nil, err
	}
	if err := cl.report(clusterProblems(t)); err != nil {
		return nil, err
	}
	return t, nil
}

// LoadNode reads and validates a node description alone (an embedded name or a path), with the
// overrides whose path starts with "node.". Errors are bad input.
func LoadNode(nameOrPath string, overrides []machines.Override) (*Node, error) {
	n, _, err := loadValidNode(nameOrPath, overrides)
	return n, err
}

// loadValidNode is LoadNode, also returning where its keys were given.
func loadValidNode(nameOrPath string, overrides []machines.Override) (*Node, *located, error) {
	d, err := readDescription(nameOrPath, "", "node file")
	if err != nil {
		return nil, nil, badinput.Wrap(err)
	}
	return validNode(d, nameOrPath, overrides)
}

// validNode is loadValidNode on a description read (named nameOrPath).
func validNode(d *description, nameOrPath string, overrides []machines.Override) (*Node, *located, error) {
	n, nl, err := decodeNode(d, nameOrPath, overrides, nil)
	if err != nil {
		return nil, nil, badinput.Wrap(err)
	}
	if err := nl.report(nodeProblems(n, nl)); err != nil {
		return nil, nil, badinput.Wrap(err)
	}
	return n, nl, nil
}

// loadNode reads and decodes a node description. A cluster file's node
// key names it: cl, when not nil, locates that key, and an error reading
// the file — or a file that is not a node description — names it.
func loadNode(nameOrPath, dir string, overrides []machines.Override, cl *located) (*Node, *located, error) {
	data, source, path, err := read(nameOrPath, dir, "node file")
	if err != nil {
		return nil, nil, cl.atNode(err)
	}
	d, err := parseDescription(data, source, path)
	if err != nil {
		return nil, nil, cl.atNode(err)
	}
	return decodeNode(d, nameOrPath, overrides, cl)
}

// decodeNode decodes node description d (named nameOrPath); cl is
// loadNode's.
func decodeNode(d *description, nameOrPath string, overrides []machines.Override, cl *located) (*Node, *located, error) {
	if err := d.notNode(nameOrPath); err != nil {
		return nil, nil, cl.atNode(err)
	}
	var n Node
	l, err := decode(d, &n, "node", overrides, bridgeKey)
	if err != nil {
		return nil, nil, err
	}
	deriveBridge(&n, l)
	if n.Name == "" {
		n.Name = strings.TrimSuffix(filepath.Base(d.source), filepath.Ext(d.source))
	}
	return &n, l, nil
}

// deriveBridge fills in the bridge's bandwidth where the description
// leaves it out (l.unset), recording how it was formed in l.derived.
// (Filled in before validation: the value checked and simulated is the one
// derived from the generation and group size in effect, --set ones
// included.)
func deriveBridge(n *Node, l *located) {
	if l.unset[bridgeKey] {
		n.InterGroup.Bandwidth = n.BridgeBandwidth()
		l.derived = map[string]string{bridgeKey: n.bridgeRule()}
	}
}

// inlineClusterFile is the layout of a cluster file that gives its node
// inline (node: a mapping of a node description's keys) rather than by
// name.
type inlineClusterFile struct {
	Name        string `mapstructure:"name"`
	Description string `mapstructure:"description"`
	Node        Node   `mapstructure:"node"`
	Nodes       int    `mapstructure:"nodes"`
	Fabric      Fabric `mapstructure:"fabric"`
}

// inlineNode returns the node: mapping of a cluster file that gives its
// node inline (false: it names a node file), its keys in lower case.
func (d *description) inlineNode() (map[string]any, bool) {
	m, ok := d.c.Viper().Get("node").(map[string]any)
	return m, ok
}

// loadInline reads a cluster file whose node: is a mapping holding the
// node description (as the cluster's view writes it). Messages about the
// node's keys name the cluster file, the line and the key's path in it
// (node.hccs.link_bandwidth).
func loadInline(d *description, inline map[string]any, overrides []machines.Override) (*Topology, error) {
	c, source, path := d.c, d.source, d.path
	var nodeOvs []machines.Override
	for _, o := range overrides {
		p := strings.ToLower(o.Path)
		if p == "cluster.node" || strings.HasPrefix(p, "cluster.node.") {
			return nil, fmt.Errorf("--set %s: %s gives its node inline (node: holds the node's keys): set them with --set node.KEY=VALUE", o, source)
		}
		if strings.HasPrefix(p, "node.") {
			nodeOvs = append(nodeOvs, o)
		}
	}
	if err := notNodeKeys(source+": key \"node\": the inline node", inline); err != nil {
		return nil, err
	}
	if err := machines.ApplyOverrides(c, &clusterFile{}, "cluster", overrides); err != nil {
		return nil, err
	}
	var f inlineClusterFile
	if err := machines.ApplyOverrides(c, &f, "", nodeOvs); err != nil {
		return nil, err
	}
	if err := machines.DecodeStrict(c, &f); err != nil {
		return nil, err
	}
	lines := c.Lines()
	cl := &located{source: source, file: path, lines: lines, set: setBy(overrides, "cluster")}
	nl := &located{source: source, file: path, lines: map[string]int{}, set: setBy(overrides, "node"),
		unset: map[string]bool{}, keyPrefix: "node."}
	for k, line := range lines {
		if rest, ok := strings.CutPrefix(k, "node."); ok {
			nl.lines[rest] = line
		}
	}
	if err := missingKeys(source, c, reflect.TypeFor[inlineClusterFile](), "cluster", []string{"node." + bridgeKey}, func(key string) {
		nl.unset[strings.TrimPrefix(key, "node.")] = true
	}); err != nil {
		return nil, err
	}
	n := f.Node
	deriveBridge(&n, nl)
	t := &Topology{Name: f.Name, Description: f.Description, Node: n, Nodes: f.Nodes, Fabric: f.Fabric, nodeAt: nl, clusterAt: cl}
	if t.Name == "" {
		t.Name = strings.TrimSuffix(filepath.Base(source), filepath.Ext(source))
	}
	if t.Node.Name == "" {
		t.Node.Name = t.Name + "-node"
	}
	if err := nl.report(nodeProblems(&t.Node, nl)); err != nil {
		return nil, err
	}
	if err := cl.report(clusterProblems(t)); err != nil {
		return nil, err
	}
	return t, nil
}

// setBy maps the lower-case paths, below prefix, of the overrides under
// prefix ("node" takes node.npus as npus) to the override.
func setBy(overrides []machines.Override, prefix string) map[string]string {
	set := map[string]string{}
	for _, o := range overrides {
		if rest, ok := strings.CutPrefix(strings.ToLower(o.Path), prefix+"."); ok {
			set[rest] = o.String()
		}
	}
	return set
}

// notNode returns an error when d is clearly not a node description:
// a cluster description (a node: key) or a single chip's machine file (a
// kind: or core: key), without the npu: key of a node. (Their keys would
// each be refused as unknown, one line apiece.) what names the text in
// the message.
func (d *description) notNode(what string) error {
	return notNodeKeys(what, d.c.Viper().AllSettings())
}

// notNodeKeys is notNode on decoded top-level keys.
func notNodeKeys(what string, top map[string]any) error {
	if _, ok := top["npu"]; ok {
		return nil
	}
	_, isCluster := top["node"]
	_, kind := top["kind"]
	_, core := top["core"]
	switch {
	case isCluster:
		return fmt.Errorf("%s is a cluster description (it has a node: key), not a node description (npu:, npus:, hosts:, …, e.g. cloudbrain2-node)", what)
	case kind || core:
		return fmt.Errorf("%s is a chip's machine file, not a node description (npu:, npus:, hosts:, …, e.g. cloudbrain2-node): a node names its NPU machine with npu:", what)
	}
	return nil
}

// located turns a key path into "file:line" (or the --set that set it) for messages.
type located struct {
	source string
	file   string            // the file read on disk ("": an embedded description)
	lines  map[string]int    // lower-case dotted path → line
	set    map[string]string // lower-case dotted path → "--set path=value"
	// unset holds the optional keys neither the file nor an override gives; derived says how
	// the value of such a key was formed.
	unset   map[string]bool
	derived map[string]string
	// keyPrefix is where the description's keys lie in the file: "node."
	// for a node given inline in its cluster's file ("" for a file of its
	// own). Messages name a key with it, as the file spells its path.
	keyPrefix string
}

func (l *located) where(key string) string {
	k := strings.ToLower(key)
	if s, ok := l.set[k]; ok {
		return "--set " + s
	}
	if d, ok := l.derived[k]; ok {
		return fmt.Sprintf("%s (%s)", l.source, d)
	}
	if n, ok := l.lines[k]; ok {
		return fmt.Sprintf("%s:%d", l.source, n)
	}
	return l.source
}

func (l *located) errorf(key, format string, args ...any) error {
	return fmt.Errorf("%s: key %q: %s", l.where(key), l.keyPrefix+key, fmt.Sprintf(format, args...))
}

// atNode places err, about the node description a cluster names, at the
// cluster's node key; l nil (a node description read alone) leaves it.
func (l *located) atNode(err error) error {
	if l == nil {
		return err
	}
	return l.errorf("node", "%v", err)
}

func (l *located) report(ps []problem) error {
	var errs []error
	for _, p := range ps {
		errs = append(errs, l.errorf(p.key, "%s", p.msg))
	}
	return errors.Join(errs...)
}

// decode reads YAML into out strictly with the project's loader, applies the overrides under
// prefix and checks that every value key is given (a description spells out every number), but
// for the optional ones, which the returned located lists in unset when they are not.
func decode(d *description, out any, prefix string, overrides []machines.Override, optional ...string) (*located, error) {
	c, source := d.c, d.source
	if err := machines.ApplyOverrides(c, out, prefix, overrides); err != nil {
		return nil, err
	}
	if err := machines.DecodeStrict(c, out); err != nil {
		return nil, err
	}
	l := &located{source: source, file: d.path, lines: c.Lines(), set: setBy(overrides, prefix), unset: map[string]bool{}}
	if err := missingKeys(source, c, reflect.TypeOf(out).Elem(), prefix, optional, func(key string) { l.unset[key] = true }); err != nil {
		return nil, err
	}
	return l, nil
}

// missingKeys checks that c gives every value key of struct type t but the
// names and descriptions and the optional keys; unset is called with each
// optional key it does not give. prefix ("node" or "cluster") says which
// description the message points to.
func missingKeys(source string, c *machines.Config, t reflect.Type, prefix string, optional []string, unset func(key string)) error {
	var missing []string
	walkKeys(t, "", func(key string) {
		last := key[strings.LastIndex(key, ".")+1:]
		switch {
		case (last == "name" || last == "description") && !strings.Contains(strings.TrimPrefix(key, "node."), "."):
			// (A description's name and summary, the cluster's or its inline node's.)
		case c.Viper().IsSet(key):
		case slices.Contains(optional, key):
			unset(key)
		default:
			missing = append(missing, fmt.Sprintf("%q", key))
		}
	})
	if len(missing) == 0 {
		return nil
	}
	example := "cloudbrain2" // (the embedded description of the same level, whose comments source every value)
	if prefix == "node" {
		example = "cloudbrain2-node"
	}
	return fmt.Errorf("%s: missing key %s (a %s description gives every value; see davinci-sim machines %s)",
		source, strings.Join(missing, ", "), prefix, example)
}

// walkKeys calls f with the dotted path of every value key of struct type t.
func walkKeys(t reflect.Type, prefix string, f func(string)) {
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("mapstructure"), ",")
		if name == "" || name == "-" {
			continue
		}
		key := name
		if prefix != "" {
			key = prefix + "." + name
		}
		ft := sf.Type
		if ft.Kind() == reflect.Struct {
			walkKeys(ft, key, f)
			continue
		}
		f(key)
	}
}

// problem is one violated constraint.
type problem struct{ key, msg string }

type checker struct{ ps []problem }

func (c *checker) add(key, format string, args ...any) {
	c.ps = append(c.ps, problem{key, fmt.Sprintf(format, args...)})
}

// refused reports whether a problem was found at any of keys (a value
// derived from them is then not checked apart).
func (c *checker) refused(keys ...string) bool {
	return slices.ContainsFunc(c.ps, func(p problem) bool { return slices.Contains(keys, p.key) })
}

func (c *checker) bandwidth(key string, b machines.Bandwidth) {
	if f := float64(b); !(f > 0) || math.IsInf(f, 0) {
		c.add(key, "must be > 0 (got %v)", b)
	}
}

func (c *checker) latency(key string, ns float64) {
	if ns < 0 || !(ns <= machines.MaxOverheadNS) { // as the chips' latencies: 1 s
		c.add(key, "must be in 0..%g ns (1 s; got %v)", machines.MaxOverheadNS, ns)
	}
}

func (c *checker) link(key string, l Link) {
	c.bandwidth(key+".bandwidth", l.Bandwidth)
	c.latency(key+".latency_ns", l.LatencyNS)
}

// text refuses a name or description that is not UTF-8 text (only a
// --set can give one: a file's YAML is UTF-8), which no file could hold.
func (c *checker) text(key, s string) {
	if !utf8.ValidString(s) {
		c.add(key, "must be UTF-8 text (got %q)", s)
	}
}

func (c *checker) oneOf(key, v string, names []string) {
	if !slices.Contains(names, v) {
		c.add(key, "unknown collective algorithm %q: must be one of %s", v, strings.Join(names, ", "))
	}
}

// nodeProblems returns the constraints n violates; nl says which of its values were derived.
func nodeProblems(n *Node, nl *located) []problem {
	var c checker
	c.text("name", n.Name)
	c.text("description", n.Description)
	if !slices.Contains(machines.Names(), n.NPU) {
		c.add("npu", "unknown NPU machine %q (a node's NPU is one of %s)", n.NPU, strings.Join(npuMachines(), ", "))
	} else if why := notNPU(n.NPU); why != "" {
		c.add("npu", "%s: a node's NPU must be a DaVinci machine with a host section (embedded: %s)", why, strings.Join(npuMachines(), ", "))
	}
	if !slices.Contains([]int{1, 2, 4, 8}, n.NPUs) {
		c.add("npus", "must be 1, 2, 4 or 8: the NPU counts HCCL can use per 910A server (CLUSTER-FACTS §1.2, S3) (got %d)", n.NPUs)
	}
	h := n.Hosts
	if h.Count < 1 || h.Count > 64 {
		c.add("hosts.count", "must be in 1..64 (got %d)", h.Count)
	} else if slices.Contains([]int{1, 2, 4, 8}, n.NPUs) && h.Count < n.NPUs && n.NPUs%h.Count != 0 {
		// Each socket's NPUs share it evenly (a rank gets 1/(npus/count)
		// of its cores and memory bandwidth): 3 sockets for 8 NPUs gave
		// 3 ranks half a socket each. (More sockets than NPUs leave some
		// empty: each NPU has one to itself.)
		c.add("hosts.count", "must divide npus (%d) evenly, or be at least npus: the sockets share the NPUs (got %d)", n.NPUs, h.Count)
	}
	if h.Cores < 1 {
		c.add("hosts.cores", "must be ≥ 1 (got %d)", h.Cores)
	}
	if msg := machines.ClockProblem(h.Clock); msg != "" {
		c.add("hosts.clock", "%s", msg)
	}
	c.bandwidth("hosts.memory_bandwidth", h.MemoryBandwidth)
	if h.Memory <= 0 {
		c.add("hosts.memory", "must be > 0 (got %v)", h.Memory)
	}
	c.link("hosts.smp", h.SMP)
	if g := n.PCIe.Generation; g != 3 && g != 4 {
		c.add("pcie.generation", "must be 3 or 4 (got %d)", g)
	}
	c.bandwidth("pcie.gen3_bandwidth", n.PCIe.Gen3Bandwidth)
	c.bandwidth("pcie.gen4_bandwidth", n.PCIe.Gen4Bandwidth)
	c.latency("pcie.latency_ns", n.PCIe.LatencyNS)
	if g := n.HCCS.GroupSize; g < 1 || g > 8 || g&(g-1) != 0 {
		c.add("hccs.group_size", "must be 1, 2, 4 or 8 (got %d)", g)
	}
	c.bandwidth("hccs.link_bandwidth", n.HCCS.LinkBandwidth)
	c.latency("hccs.latency_ns", n.HCCS.LatencyNS)
	if _, derived := nl.derived[bridgeKey]; !derived {
		c.bandwidth("inter_group.bandwidth", n.InterGroup.Bandwidth)
	} else if !c.refused("npus", "hccs.group_size", "pcie.generation", "pcie.gen3_bandwidth", "pcie.gen4_bandwidth") {
		// (Derived from a refused value, the bridge's is refused with it, at its key.)
		c.bandwidth("inter_group.bandwidth", n.InterGroup.Bandwidth)
	}
	c.latency("inter_group.latency_ns", n.InterGroup.LatencyNS)
	c.link("roce", n.RoCE)
	c.link("host_network", n.HostNetwork)
	c.oneOf("collectives.intra_server", n.Collectives.IntraServer, intraNames)
	c.oneOf("collectives.inter_server", n.Collectives.InterServer, interNames)
	c.oneOf("collectives.host_bcast", n.Collectives.HostBcast, hostNames)
	c.bandwidth("collectives.npu_reduce_bandwidth", n.Collectives.NPUReduceBandwidth)
	c.bandwidth("collectives.host_reduce_bandwidth", n.Collectives.HostReduceBandwidth)
	return c.ps
}

// notNPU says why the embedded machine name cannot be a node's NPU ("" when
// it can): the cluster programs run DaVinci chips driven by their host.
func notNPU(name string) string {
	m, err := machines.Load(name, nil)
	switch {
	case err != nil:
		return fmt.Sprintf("machine %s does not load (%v)", name, err)
	case m.DaVinci() == nil:
		return fmt.Sprintf("%s is a GPU (machine kind %s)", name, m.Kind)
	case !m.HasHost():
		return fmt.Sprintf("%s has no host section", name)
	}
	return ""
}

// npuMachines lists the embedded machines a node's npu: may name: the
// DaVinci machines with a host section.
func npuMachines() []string {
	var out []string
	for _, name := range machines.Names() {
		if notNPU(name) == "" {
			out = append(out, name)
		}
	}
	return out
}

func clusterProblems(t *Topology) []problem {
	var c checker
	c.text("name", t.Name)
	c.text("description", t.Description)
	if t.Nodes < 1 || t.Nodes > MaxNodes {
		c.add("nodes", "must be in 1..%d (Cloud Brain II has 512 servers, CLUSTER-FACTS §1.5) (got %d)", MaxNodes, t.Nodes)
	}
	f := t.Fabric
	c.bandwidth("fabric.port_bandwidth", f.PortBandwidth)
	c.latency("fabric.latency_ns", f.LatencyNS)
	if !(f.Oversubscription >= 1) || math.IsInf(f.Oversubscription, 0) {
		c.add("fabric.oversubscription", "must be ≥ 1 (1 = non-blocking) (got %v)", f.Oversubscription)
	}
	if f.Supernodes < 1 || (t.Nodes >= 1 && f.Supernodes > t.Nodes) {
		c.add("fabric.supernodes", "must be in 1..nodes = %d (got %d)", t.Nodes, f.Supernodes)
	}
	if !(f.SpineOversubscription >= 1) || math.IsInf(f.SpineOversubscription, 0) {
		c.add("fabric.spine_oversubscription", "must be ≥ 1 (got %v)", f.SpineOversubscription)
	}
	c.latency("fabric.spine_latency_ns", f.SpineLatencyNS)
	return c.ps
}

// NPUs returns the number of NPUs in the cluster.
func (t *Topology) NPUs() int { return t.Nodes * t.Node.NPUs }

// Supernode returns the supernode of node k: the nodes are split into Fabric.Supernodes
// contiguous blocks.
func (t *Topology) Supernode(k int) int { return k * t.Fabric.Supernodes / t.Nodes }

// Group returns the HCCS group of NPU i of a node.
func (t *Topology) Group(i int) int { return i / t.groupSize() }

func (t *Topology) groupSize() int { return min(t.Node.HCCS.GroupSize, t.Node.NPUs) }

// HostOf returns the host (socket) NPU i of a node is attached to by PCIe: the NPUs are split into
// Hosts.Count contiguous blocks (NPUs 0-1 on host 0, …, for 8 NPUs on 4 hosts).
func (t *Topology) HostOf(i int) int { return i * t.Node.Hosts.Count / t.Node.NPUs }

// IsDescription reports whether nameOrPath names an embedded cluster or node description, or a
// YAML file that is one (a top-level npu: or node: key), rather than a single-chip machine.
func IsDescription(nameOrPath string) bool {
	if slices.Contains(Names(), nameOrPath) {
		return true
	}
	if !strings.ContainsAny(nameOrPath, `/\`) && filepath.Ext(nameOrPath) == "" {
		return false
	}
	data, err := machines.ReadFile(nameOrPath, "machine file") // size-checked: never /dev/zero whole
	if err != nil {
		return false
	}
	return Describes(data) != ""
}

// Describes says what YAML text data describes: "node" (a top-level npu:
// key), "cluster" (a node: key), or "" (neither: a single chip's machine
// file, a program, or not YAML).
func Describes(data []byte) string {
	top := machines.TopLevel(data)
	switch {
	case top["npu"] != nil:
		return "node"
	case top["node"] != nil:
		return "cluster"
	}
	return ""
}

// LoadSystem loads what a run on "a cluster machine" names: a cluster description (Load) or a
// node description alone, which is a cluster of one node (no fabric). Errors are bad input.
func LoadSystem(nameOrPath string, overrides []machines.Override) (*Topology, error) {
	d, err := readDescription(nameOrPath, "", "cluster or node file")
	if err != nil {
		return nil, badinput.Wrap(err)
	}
	if d.has("npu") {
		for _, o := range overrides {
			if strings.HasPrefix(strings.ToLower(o.Path), "cluster.") {
				return nil, badinput.Wrap(fmt.Errorf("--set %s: %s is a node description, not a cluster (use a cluster such as cloudbrain2 for cluster.* keys)", o, nameOrPath))
			}
		}
		n, nl, err := validNode(d, nameOrPath, overrides)
		if err != nil {
			return nil, err
		}
		return &Topology{Name: n.Name, Description: n.Description, Node: *n, Nodes: 1,
			Fabric: Fabric{Supernodes: 1, Oversubscription: 1, SpineOversubscription: 1}, nodeAt: nl, nodeOnly: true}, nil
	}
	t, err := loadCluster(d, overrides)
	return t, badinput.Wrap(err)
}
