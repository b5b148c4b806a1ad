package pull

import (
	"fmt"

	"github.com/pullpath/pullpath/internal/verdict"
)

// failure is the first broken link of the walk: it becomes the verdict.
type failure struct {
	code    verdict.Code
	stage   verdict.Stage
	role    verdict.Role
	host    string
	summary string
}

func (f *failure) Error() string { return fmt.Sprintf("%s: %s", f.code, f.summary) }

func fail(code verdict.Code, stage verdict.Stage, role verdict.Role, host, format string, args ...any) *failure {
	return &failure{code: code, stage: stage, role: role, host: host, summary: fmt.Sprintf(format, args...)}
}

// stageOf maps an endpoint role to the stage a failure on it belongs to.
func stageOf(role verdict.Role) verdict.Stage {
	switch role {
	case verdict.RoleAuth:
		return verdict.StageAuth
	case verdict.RoleBlob:
		return verdict.StageBlob
	}
	return verdict.StageRegistry
}
