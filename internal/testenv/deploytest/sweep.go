package deploytest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/pullpath/pullpath/internal/testenv"
)

// SweepNamespace and SweepUser are the namespace and ServiceAccount user
// of deploy/sweep.
const (
	SweepNamespace = "pullpath-sweep"
	SweepUser      = "system:serviceaccount:pullpath-sweep:pullpath-sweep"
)

// SweepGroups are the ServiceAccount's groups.
var SweepGroups = []string{"system:serviceaccounts", "system:serviceaccounts:" + SweepNamespace, "system:authenticated"}

// deployDir finds deploy/NAME by walking up from the working directory.
func deployDir(name string) (string, error) {
	root, err := testenv.ModuleRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "deploy", name), nil
}

// ApplySweep creates every object of deploy/sweep/*.yaml (objects that
// exist are left as they are) and returns the Role of the working
// namespace.
func ApplySweep(ctx context.Context, c kubernetes.Interface) (*rbacv1.Role, error) {
	dir, err := deployDir("sweep")
	if err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("%s/*.yaml: %v (%d files)", dir, err, len(files))
	}
	var role *rbacv1.Role
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, doc := range strings.Split(string(b), "\n---\n") {
			var meta struct {
				Kind string `json:"kind"`
			}
			if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
				return nil, fmt.Errorf("%s: %v", f, err)
			}
			var cerr error
			switch meta.Kind {
			case "Namespace":
				var o corev1.Namespace
				if cerr = yaml.UnmarshalStrict([]byte(doc), &o); cerr == nil {
					if o.Labels["pod-security.kubernetes.io/enforce"] != "privileged" {
						return nil, fmt.Errorf("%s: namespace %s lacks pod-security.kubernetes.io/enforce: privileged", f, o.Name)
					}
					_, cerr = c.CoreV1().Namespaces().Create(ctx, &o, metav1.CreateOptions{})
				}
			case "ServiceAccount":
				var o corev1.ServiceAccount
				if cerr = yaml.UnmarshalStrict([]byte(doc), &o); cerr == nil {
					_, cerr = c.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, &o, metav1.CreateOptions{})
				}
			case "ClusterRole":
				var o rbacv1.ClusterRole
				if cerr = yaml.UnmarshalStrict([]byte(doc), &o); cerr == nil {
					_, cerr = c.RbacV1().ClusterRoles().Create(ctx, &o, metav1.CreateOptions{})
				}
			case "ClusterRoleBinding":
				var o rbacv1.ClusterRoleBinding
				if cerr = yaml.UnmarshalStrict([]byte(doc), &o); cerr == nil {
					_, cerr = c.RbacV1().ClusterRoleBindings().Create(ctx, &o, metav1.CreateOptions{})
				}
			case "Role":
				var o rbacv1.Role
				if cerr = yaml.UnmarshalStrict([]byte(doc), &o); cerr == nil {
					if o.Namespace == SweepNamespace {
						role = o.DeepCopy()
					}
					_, cerr = c.RbacV1().Roles(o.Namespace).Create(ctx, &o, metav1.CreateOptions{})
				}
			case "RoleBinding":
				var o rbacv1.RoleBinding
				if cerr = yaml.UnmarshalStrict([]byte(doc), &o); cerr == nil {
					_, cerr = c.RbacV1().RoleBindings(o.Namespace).Create(ctx, &o, metav1.CreateOptions{})
				}
			default:
				return nil, fmt.Errorf("%s: unexpected kind %q", f, meta.Kind)
			}
			if cerr != nil && !apierrors.IsAlreadyExists(cerr) {
				return nil, fmt.Errorf("%s: %s: %v", f, meta.Kind, cerr)
			}
		}
	}
	if role == nil {
		return nil, fmt.Errorf("%s: no Role in %s", dir, SweepNamespace)
	}
	return role, nil
}
