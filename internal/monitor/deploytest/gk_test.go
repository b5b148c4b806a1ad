package deploytest

import "k8s.io/apimachinery/pkg/runtime/schema"

func schemaGK(group, kind string) schema.GroupKind { return schema.GroupKind{Group: group, Kind: kind} }
