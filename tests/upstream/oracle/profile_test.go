package oracle

import (
	"fmt"
	"slices"
	"testing"
)

// TestProfile: the oracle's profile is upstream's default profile without Excluded, which is
// schedhost's default profile (names and score weights, in upstream's order).
func TestProfile(t *testing.T) {
	cfg, err := DefaultConfiguration()
	if err != nil {
		t.Fatal(err)
	}
	var upstream []string
	for _, p := range cfg.Profiles[0].Plugins.MultiPoint.Enabled {
		upstream = append(upstream, p.Name)
	}
	for _, name := range Excluded {
		if !slices.Contains(upstream, name) {
			t.Errorf("%s is excluded but not in upstream's default profile %v", name, upstream)
		}
	}
	profile, err := Profile()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range profile.Plugins.MultiPoint.Enabled {
		got = append(got, fmt.Sprintf("%s/%d", p.Name, p.Weight))
	}
	equal(t, "plugins", got, []string{
		"SchedulingGates/0", "PrioritySort/0", "NodeName/0", "NodeUnschedulable/0", "TaintToleration/3",
		"NodeAffinity/2", "NodePorts/0", "NodeResourcesFit/1", "VolumeRestrictions/0",
		"NodeVolumeLimits/0", "VolumeBinding/0", "VolumeZone/0",
		"PodTopologySpread/2", "InterPodAffinity/2",
		"DefaultPreemption/0", "NodeResourcesBalancedAllocation/1", "ImageLocality/1", "DefaultBinder/0",
	})
	equal(t, "percentageOfNodesToScore", *profile.PercentageOfNodesToScore, int32(100))
	t.Logf("upstream's default profile: %v", upstream)
}
