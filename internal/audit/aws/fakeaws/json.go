package fakeaws

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	awsaudit "github.com/pullpath/pullpath/internal/audit/aws"
)

// ---- ECR and Secrets Manager: the awsJson1_1 protocol ----

// jsonOps: the file of each JSON-protocol call the audit makes (the
// service's X-Amz-Target) and the request member that names what it asks
// for, when the answer depends on it.
var jsonOps = map[string]string{
	"AmazonEC2ContainerRegistry_V20150921.DescribePullThroughCacheRules":       awsaudit.FileCacheRules,
	"AmazonEC2ContainerRegistry_V20150921.DescribeRepositoryCreationTemplates": awsaudit.FileTemplates,
	"AmazonEC2ContainerRegistry_V20150921.DescribeRepositories":                awsaudit.FileRepositories,
	"AmazonEC2ContainerRegistry_V20150921.GetRegistryPolicy":                   awsaudit.FileRegistryPolicy,
	"secretsmanager.DescribeSecret":                                            awsaudit.FileSecret,
}

// serveJSON answers an ECR or Secrets Manager call from the folder's file:
// its members as the service's model names them (the CLI prints the same),
// timestamps as epoch seconds; a file holding the API's error (boto3's
// {"Error": ...}) answers that error, as the service does.
func (s *Server) serveJSON(w http.ResponseWriter, r *http.Request, target string) {
	service, action, _ := strings.Cut(target, ".")
	svc := "ecr"
	if service == "secretsmanager" {
		svc = "secretsmanager"
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if s.record(Call{Service: svc, Action: action, Params: map[string][]string{"body": {string(body)}}}) {
		jsonError(w, http.StatusBadRequest, "AccessDeniedException", "User: arn:aws:sts::111122223333:assumed-role/audit/x is not authorized to perform: "+svc+":"+action)
		return
	}
	file, ok := jsonOps[target]
	if !ok {
		jsonError(w, http.StatusBadRequest, "UnknownOperationException", "unknown operation "+target)
		return
	}
	data, err := os.ReadFile(filepath.Join(s.dir, file))
	if err != nil {
		s.jsonNone(w, file, body)
		return
	}
	page, err := awsaudit.Page(data)
	var re *awsaudit.RecordedError
	if asRecorded(err, &re) {
		jsonError(w, http.StatusBadRequest, re.Code, re.Message)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	var doc map[string]any
	if err := json.Unmarshal(page, &doc); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	delete(doc, "ResponseMetadata")
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	_ = json.NewEncoder(w).Encode(epochTimes(doc, timeMembers))
}

// jsonNone is the answer of an account without the file: no rules, no
// templates; no repository, registry policy or secret (the API's "not
// found").
func (s *Server) jsonNone(w http.ResponseWriter, file string, body []byte) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	switch file {
	case awsaudit.FileCacheRules:
		fmt.Fprint(w, `{"pullThroughCacheRules":[]}`)
	case awsaudit.FileTemplates:
		fmt.Fprint(w, `{"registryId":"111122223333","repositoryCreationTemplates":[]}`)
	case awsaudit.FileRepositories:
		jsonError(w, http.StatusBadRequest, "RepositoryNotFoundException", "The repository does not exist: "+string(body))
	case awsaudit.FileRegistryPolicy:
		jsonError(w, http.StatusBadRequest, "RegistryPolicyNotFoundException", "Registry policy does not exist in the registry")
	default:
		jsonError(w, http.StatusBadRequest, "ResourceNotFoundException", "Secrets Manager can't find the specified secret.")
	}
}

func asRecorded(err error, re **awsaudit.RecordedError) bool { return errors.As(err, re) }

func jsonError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-Errortype", code)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": code, "message": msg})
}

// timeMembers are the JSON-protocol members that are timestamps (epoch
// seconds on the wire), as ECR's and Secrets Manager's models name them.
var timeMembers = map[string]bool{"createdAt": true, "updatedAt": true, "CreatedDate": true, "LastChangedDate": true,
	"LastAccessedDate": true, "LastRotatedDate": true, "DeletedDate": true, "NextRotationDate": true}
