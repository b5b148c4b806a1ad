package nodeplace

import "testing"

func TestCloudCommands(t *testing.T) {
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"aws audit, no region", AWS.AuditCommand(Target{}), "pullpath aws audit --cluster CLUSTER"},
		{"aws audit, region", AWS.AuditCommand(Target{Region: "eu-west-1"}), "pullpath aws audit --cluster CLUSTER --region eu-west-1"},
		{"aws collect", AWS.CollectCommand(Target{}), "pullpath aws collect --cluster CLUSTER --region REGION --out DIR"},
		{"azure audit", Azure.AuditCommand(Target{ResourceGroup: "rg", Cluster: "aks"}), "pullpath azure audit --resource-group rg --name aks"},
		{"azure collect, no subscription", Azure.CollectCommand(Target{}), "pullpath azure collect --resource-group RG --name CLUSTER --out DIR"},
		{"azure collect, subscription", Azure.CollectCommand(Target{Subscription: "s1"}), "pullpath azure collect --subscription s1 --resource-group RG --name CLUSTER --out DIR"},
		{"gcp audit", GCP.AuditCommand(Target{Image: "gcr.io/p/a:1", Project: "p"}), "pullpath gcp audit gcr.io/p/a:1 --project p --location LOCATION --cluster CLUSTER"},
		{"gcp collect", GCP.CollectCommand(Target{}), "pullpath gcp collect IMAGE --project PROJECT --location LOCATION --cluster CLUSTER --out DIR"},
		{"aws from", AWS.FromCommand(), "pullpath aws audit --from DIR"},
		{"gcp from", GCP.FromCommand(), "pullpath gcp audit IMAGE --from DIR"},
		{"azure flag", Azure.FromFlag(), "--from-azure"},
		{"titles", AWS.Title() + " " + Azure.Title() + " " + GCP.Title(), "AWS Azure GCP"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

func TestParseCloud(t *testing.T) {
	for _, c := range Clouds {
		if got, ok := ParseCloud(string(c)); !ok || got != c {
			t.Errorf("ParseCloud(%q) = %q, %v", c, got, ok)
		}
		if ParseProviderID(facts[c].scheme+"://x").Cloud != c {
			t.Errorf("ParseProviderID(%s://x).Cloud != %s", facts[c].scheme, c)
		}
	}
	if c, ok := ParseCloud("gce"); ok {
		t.Errorf("ParseCloud(gce) = %q, true; want false (gce is GKE's providerID scheme, the cloud is gcp)", c)
	}
}
