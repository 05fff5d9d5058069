// Package oracle runs upstream kube-scheduler's framework in-process on Kubernetes manifests
// and describes each pending pod's scheduling cycle as the explain document of
// docs/conformance.md, the same document `schedctl simulate --explain` prints. The cluster's
// storage objects (claims, volumes, classes, CSINodes, CSIDrivers, capacities, attachments)
// reach the volume plugins through their informers; a cycle stops at choosing a node, so it
// binds no claim.
package oracle

// Document is the explain document: one entry per pending pod of the input, in input order.
type Document struct {
	Pods []PodCycle `json:"pods"`
}

// PodCycle is what one scheduling cycle of one pending pod found.
type PodCycle struct {
	Namespace  string           `json:"namespace"`
	Name       string           `json:"name"`
	Gated      *PluginStatus    `json:"gated,omitempty"`
	PreFilter  *PluginStatus    `json:"preFilter,omitempty"`
	Nodes      []NodeVerdict    `json:"nodes,omitempty"`
	Scores     []NodeScore      `json:"scores,omitempty"`
	Best       []string         `json:"best,omitempty"`
	Placed     string           `json:"placed,omitempty"`
	Message    string           `json:"message,omitempty"`
	PostFilter *PostFilterEntry `json:"postFilter,omitempty"`
}

// PluginStatus is a plugin's non-success status: upstream's code name and its reasons in order.
type PluginStatus struct {
	Plugin  string   `json:"plugin"`
	Code    string   `json:"code"`
	Reasons []string `json:"reasons"`
}

// NodeVerdict is one node's Filter outcome; Plugin, Code and Reasons are set when not feasible.
type NodeVerdict struct {
	Name     string   `json:"name"`
	Feasible bool     `json:"feasible"`
	Plugin   string   `json:"plugin,omitempty"`
	Code     string   `json:"code,omitempty"`
	Reasons  []string `json:"reasons,omitempty"`
}

// NodeScore is one feasible node's scores, plugins sorted by name.
type NodeScore struct {
	Name    string        `json:"name"`
	Total   int64         `json:"total"`
	Plugins []PluginScore `json:"plugins"`
}

// PluginScore is one Score plugin's scores for one node.
type PluginScore struct {
	Plugin     string `json:"plugin"`
	Raw        int64  `json:"raw"`
	Normalized int64  `json:"normalized"`
	Weighted   int64  `json:"weighted"`
}

// PostFilterEntry is what preemption would do for a pod that fits nowhere.
type PostFilterEntry struct {
	NominatedNode string   `json:"nominatedNode"`
	Victims       []string `json:"victims"`
}
