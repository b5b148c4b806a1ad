// Package fakeaws is a loopback HTTP server that answers the three AWS
// protocols the audit's live mode speaks, from an account saved as AWS CLI
// JSON (the audit's offline folder): EC2 Query (form POST, XML answers with
// the members' XML names of the EC2 API model, ec2names.json, read from the
// SDK's EC2 deserializer by gen_names.py), EKS REST-JSON (GET
// /clusters/NAME, epoch-second timestamps as the wire has them) and IAM
// Query (SimulatePrincipalPolicy). It honours MaxResults/NextToken paging,
// records every call with its parameters, and can refuse chosen actions
// the way the APIs do (403 UnauthorizedOperation / AccessDenied).
//
// It exists because no AWS emulator is reachable from CI; the client side
// under test is the real AWS SDK for Go v2, pointed here with BaseEndpoint.
package fakeaws

import (
	_ "embed"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"

	awsaudit "github.com/pullpath/pullpath/internal/audit/aws"
)

//go:embed ec2names.json
var ec2namesJSON []byte

var ec2names map[string]map[string]string

func init() {
	if err := json.Unmarshal(ec2namesJSON, &ec2names); err != nil {
		panic(err)
	}
}

// Call is one request the server answered.
type Call struct {
	Service string // ec2, eks, iam
	Action  string // DescribeSubnets, DescribeCluster, ...
	Params  url.Values
}

// Server serves one account.
type Server struct {
	*httptest.Server
	dir string

	mu       sync.Mutex
	calls    []Call
	deny     map[string]bool
	loaded   map[string]any
	identity string
}

// New serves the account in dir (the audit's offline folder).
func New(dir string) *Server {
	s := &Server{dir: dir, deny: map[string]bool{}, loaded: map[string]any{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Deny makes the server refuse an action (EC2: UnauthorizedOperation; IAM
// and EKS: AccessDenied).
func (s *Server) Deny(action string) {
	s.mu.Lock()
	s.deny[action] = true
	s.mu.Unlock()
}

// Calls are the requests answered so far.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

func (s *Server) record(c Call) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, c)
	return s.deny[c.Action]
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/clusters/") {
		s.serveEKS(w, r)
		return
	}
	if t := r.Header.Get("X-Amz-Target"); t != "" {
		s.serveJSON(w, r, t)
		return
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	action := r.PostForm.Get("Action")
	switch r.PostForm.Get("Version") {
	case "2016-11-15":
		s.serveEC2(w, action, r.PostForm)
	case "2010-05-08":
		s.serveIAM(w, action, r.PostForm)
	case "2011-06-15":
		s.serveSTS(w, action, r.PostForm)
	default:
		http.Error(w, "unknown protocol version "+r.PostForm.Get("Version"), http.StatusBadRequest)
	}
}

// file decodes one output of the folder into v, in any shape the audit
// reads (the CLI's, an SDK's, a recording, pages).
func (s *Server) file(name string, v any) bool {
	b, err := os.ReadFile(filepath.Join(s.dir, name))
	if err != nil {
		return false
	}
	return awsaudit.DecodeFile(name, b, v) == nil
}

// inVPCs keeps, as EC2's vpc-id filter does, the elements of a list whose
// VpcId is one of vpcs (a folder written without the filter holds every
// VPC's objects).
func inVPCs(list reflect.Value, vpcs []string) reflect.Value {
	if len(vpcs) == 0 || list.Len() == 0 || !list.Index(0).FieldByName("VpcId").IsValid() {
		return list
	}
	out := reflect.MakeSlice(list.Type(), 0, list.Len())
	for i := 0; i < list.Len(); i++ {
		if id, ok := list.Index(i).FieldByName("VpcId").Interface().(*string); ok && id != nil && slices.Contains(vpcs, *id) {
			out = reflect.Append(out, list.Index(i))
		}
	}
	return out
}

// filterValues are the values of the request's filter named name
// (Filter.N.Name, Filter.N.Value.M).
func filterValues(p url.Values, name string) []string {
	for i := 1; ; i++ {
		n := p.Get("Filter." + strconv.Itoa(i) + ".Name")
		if n == "" {
			return nil
		}
		if n == name {
			return members(p, "Filter."+strconv.Itoa(i)+".Value.")
		}
	}
}

// ---- EKS REST-JSON ----

func (s *Server) serveEKS(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	var action, file string
	switch {
	case len(parts) == 2:
		action, file = "DescribeCluster", "eks-describe-cluster.json"
	case len(parts) == 3 && parts[2] == "node-groups":
		action, file = "ListNodegroups", "eks-list-nodegroups.json"
	case len(parts) == 4 && parts[2] == "node-groups":
		action, file = "DescribeNodegroup", "eks-describe-nodegroup-"+parts[3]+".json"
	default:
		http.Error(w, "no such EKS path", http.StatusNotFound)
		return
	}
	if s.record(Call{Service: "eks", Action: action, Params: r.URL.Query()}) {
		w.Header().Set("X-Amzn-Errortype", "AccessDeniedException")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, `{"message":"User is not authorized to perform: eks:%s"}`, action)
		return
	}
	b, err := os.ReadFile(filepath.Join(s.dir, file))
	if err != nil {
		w.Header().Set("X-Amzn-Errortype", "ResourceNotFoundException")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"message":"No cluster found for name: %s."}`, parts[1])
		return
	}
	var doc any
	if b, err = awsaudit.Page(b); err == nil {
		err = json.Unmarshal(b, &doc)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	// REST-JSON timestamps are epoch seconds on the wire.
	doc = epochTimes(doc, eksTimes)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(doc)
}

// eksTimes are EKS's timestamp members.
var eksTimes = map[string]bool{"createdAt": true, "modifiedAt": true}

// epochTimes rewrites the timestamp members (RFC 3339, or placebo's
// boto3 datetime objects) as epoch seconds, as the REST-JSON and JSON
// protocols carry them.
func epochTimes(v any, members map[string]bool) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && members[k] {
				if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
					x[k] = float64(t.UnixMicro()) / 1e6
					continue
				}
			}
			if d, ok := e.(map[string]any); ok && d["__class__"] == "datetime" {
				// placebo's boto3 datetime
				n := func(k string) int { f, _ := d[k].(float64); return int(f) }
				t := time.Date(n("year"), time.Month(n("month")), n("day"), n("hour"), n("minute"), n("second"), n("microsecond")*1000, time.UTC)
				x[k] = float64(t.UnixMicro()) / 1e6
				continue
			}
			x[k] = epochTimes(e, members)
		}
	case []any:
		for i, e := range x {
			x[i] = epochTimes(e, members)
		}
	}
	return v
}

// ---- EC2 Query ----

// ec2Ops: the file and the output member of each Describe the audit calls.
var ec2Ops = map[string]struct{ file, member, output string }{
	"DescribeInstances":      {"ec2-describe-instances.json", "Reservations", "DescribeInstancesOutput"},
	"DescribeSubnets":        {"ec2-describe-subnets.json", "Subnets", "DescribeSubnetsOutput"},
	"DescribeRouteTables":    {"ec2-describe-route-tables.json", "RouteTables", "DescribeRouteTablesOutput"},
	"DescribeVpcEndpoints":   {"ec2-describe-vpc-endpoints.json", "VpcEndpoints", "DescribeVpcEndpointsOutput"},
	"DescribeSecurityGroups": {"ec2-describe-security-groups.json", "SecurityGroups", "DescribeSecurityGroupsOutput"},
	"DescribeNetworkAcls":    {"ec2-describe-network-acls.json", "NetworkAcls", "DescribeNetworkAclsOutput"},
	"DescribeNatGateways":    {"ec2-describe-nat-gateways.json", "NatGateways", "DescribeNatGatewaysOutput"},
	"DescribePrefixLists":    {"ec2-describe-prefix-lists.json", "PrefixLists", "DescribePrefixListsOutput"},
	"DescribeDhcpOptions":    {"ec2-describe-dhcp-options.json", "DhcpOptions", "DescribeDhcpOptionsOutput"},
	"DescribeVpcs":           {"ec2-describe-vpcs.json", "Vpcs", "DescribeVpcsOutput"},
}

type ec2Outputs struct {
	Reservations   []ec2types.Reservation
	Subnets        []ec2types.Subnet
	RouteTables    []ec2types.RouteTable
	VpcEndpoints   []ec2types.VpcEndpoint
	SecurityGroups []ec2types.SecurityGroup
	NetworkAcls    []ec2types.NetworkAcl
	NatGateways    []ec2types.NatGateway
	PrefixLists    []ec2types.PrefixList
	DhcpOptions    []ec2types.DhcpOptions
	Vpcs           []ec2types.Vpc
}

func (s *Server) ec2Error(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<Response><Errors><Error><Code>%s</Code><Message>%s</Message></Error></Errors><RequestID>5c1e1e1e-0000-4000-8000-000000000000</RequestID></Response>`, code, xmlEscape(msg))
}

func (s *Server) serveEC2(w http.ResponseWriter, action string, p url.Values) {
	if s.record(Call{Service: "ec2", Action: action, Params: p}) {
		s.ec2Error(w, http.StatusForbidden, "UnauthorizedOperation", "You are not authorized to perform this operation. User: arn:aws:sts::111122223333:assumed-role/audit/x is not authorized to perform: ec2:"+action)
		return
	}
	if action == "DescribeVpcAttribute" {
		attr := p.Get("Attribute")
		file := "ec2-describe-vpc-attribute-" + attr + ".json"
		var out struct {
			VpcId              *string
			EnableDnsSupport   *ec2types.AttributeBooleanValue
			EnableDnsHostnames *ec2types.AttributeBooleanValue
		}
		if !s.file(file, &out) {
			s.ec2Error(w, http.StatusBadRequest, "InvalidVpcID.NotFound", "no "+file)
			return
		}
		s.ec2Write(w, action, "DescribeVpcAttributeOutput", reflect.ValueOf(out), "")
		return
	}
	op, ok := ec2Ops[action]
	if !ok {
		s.ec2Error(w, http.StatusBadRequest, "InvalidAction", "The action "+action+" is not valid for this web service.")
		return
	}
	var all ec2Outputs
	if !s.file(op.file, &all) {
		// An account without the file has none of the resources.
		all = ec2Outputs{}
	}
	if ids := members(p, "InstanceId."); action == "DescribeInstances" && len(ids) > 0 {
		// Only the instances asked for; one unknown id fails the call,
		// as EC2 does.
		var keep []ec2types.Reservation
		found := map[string]bool{}
		for _, r := range all.Reservations {
			var in []ec2types.Instance
			for _, x := range r.Instances {
				if x.InstanceId != nil && slices.Contains(ids, *x.InstanceId) {
					in = append(in, x)
					found[*x.InstanceId] = true
				}
			}
			if len(in) > 0 {
				r.Instances = in
				keep = append(keep, r)
			}
		}
		for _, id := range ids {
			if !found[id] {
				s.ec2Error(w, http.StatusBadRequest, "InvalidInstanceID.NotFound", "The instance ID '"+id+"' does not exist")
				return
			}
		}
		all.Reservations = keep
	}
	list := inVPCs(reflect.ValueOf(all).FieldByName(op.member), filterValues(p, "vpc-id"))
	// MaxResults / NextToken paging, with the token an offset.
	start, _ := strconv.Atoi(p.Get("NextToken"))
	n := list.Len() - start
	if max, err := strconv.Atoi(p.Get("MaxResults")); err == nil && max > 0 {
		if op.member == "Reservations" {
			// DescribeInstances counts instances, whole reservations
			// at a time.
			got, k := 0, 0
			for start+k < list.Len() && (k == 0 || got+len(all.Reservations[start+k].Instances) <= max) {
				got += len(all.Reservations[start+k].Instances)
				k++
			}
			n = k
		} else if max < n {
			n = max
		}
	}
	if n < 0 {
		n = 0
	}
	page := reflect.New(reflect.TypeOf(all)).Elem()
	page.FieldByName(op.member).Set(list.Slice(start, start+n))
	next := ""
	if start+n < list.Len() {
		next = strconv.Itoa(start + n)
	}
	s.ec2Write(w, action, op.output, page, next)
}

func (s *Server) ec2Write(w http.ResponseWriter, action, output string, v reflect.Value, next string) {
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<%sResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">`, action)
	b.WriteString("<requestId>7a62c49f-347e-4fc4-9331-6e8eEXAMPLE</requestId>")
	names := ec2names[output]
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		fv := v.Field(i)
		if fv.Kind() == reflect.Slice && fv.Len() == 0 {
			continue
		}
		if fv.Kind() == reflect.Pointer && fv.IsNil() {
			continue
		}
		if fv.Kind() == reflect.Slice && fv.IsNil() {
			continue
		}
		name := names[f.Name]
		if name == "" {
			continue
		}
		writeEC2(&b, name, fv)
	}
	if next != "" {
		fmt.Fprintf(&b, "<nextToken>%s</nextToken>", next)
	}
	fmt.Fprintf(&b, "</%sResponse>", action)
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	_, _ = w.Write([]byte(b.String()))
}

var timeType = reflect.TypeOf(time.Time{})

// writeEC2 writes v as the EC2 Query protocol does: lists as <name><item>,
// structures with their members' XML names, timestamps in ISO 8601.
func writeEC2(b *strings.Builder, name string, v reflect.Value) {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	switch {
	case v.Type() == timeType:
		fmt.Fprintf(b, "<%s>%s</%s>", name, v.Interface().(time.Time).UTC().Format("2006-01-02T15:04:05.000Z"), name)
	case v.Kind() == reflect.Slice:
		fmt.Fprintf(b, "<%s>", name)
		for i := 0; i < v.Len(); i++ {
			writeEC2(b, "item", v.Index(i))
		}
		fmt.Fprintf(b, "</%s>", name)
	case v.Kind() == reflect.Struct:
		fmt.Fprintf(b, "<%s>", name)
		t := v.Type()
		names := ec2names[t.Name()]
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			fv := v.Field(i)
			if (fv.Kind() == reflect.Pointer || fv.Kind() == reflect.Slice || fv.Kind() == reflect.Map) && fv.IsNil() || fv.Kind() == reflect.String && fv.Len() == 0 {
				continue
			}
			n := names[f.Name]
			if n == "" {
				n = lowerFirst(f.Name)
			}
			writeEC2(b, n, fv)
		}
		fmt.Fprintf(b, "</%s>", name)
	case v.Kind() == reflect.String:
		fmt.Fprintf(b, "<%s>%s</%s>", name, xmlEscape(v.String()), name)
	case v.Kind() == reflect.Bool:
		fmt.Fprintf(b, "<%s>%t</%s>", name, v.Bool(), name)
	case v.Kind() >= reflect.Int && v.Kind() <= reflect.Int64:
		fmt.Fprintf(b, "<%s>%d</%s>", name, v.Int(), name)
	case v.Kind() == reflect.Float64 || v.Kind() == reflect.Float32:
		fmt.Fprintf(b, "<%s>%g</%s>", name, v.Float(), name)
	}
}

func lowerFirst(s string) string {
	r := []rune(s)
	r[0] = unicode.ToLower(r[0])
	return string(r)
}

func xmlEscape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// ---- IAM Query ----

func (s *Server) serveIAM(w http.ResponseWriter, action string, p url.Values) {
	if s.record(Call{Service: "iam", Action: action, Params: p}) {
		w.Header().Set("Content-Type", "text/xml")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, `<ErrorResponse xmlns="https://iam.amazonaws.com/doc/2010-05-08/"><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>User is not authorized to perform: iam:%s</Message></Error><RequestId>0c3d1d3e-0000-4000-8000-000000000000</RequestId></ErrorResponse>`, action)
		return
	}
	if action != "SimulatePrincipalPolicy" {
		http.Error(w, "unknown IAM action "+action, http.StatusBadRequest)
		return
	}
	var out struct {
		EvaluationResults []iamtypes.EvaluationResult
	}
	if !s.file("iam-simulate-principal-policy.json", &out) {
		http.Error(w, "no simulation", http.StatusNotFound)
		return
	}
	// Only the actions asked for, in the order asked.
	var asked []string
	for k, v := range p {
		if strings.HasPrefix(k, "ActionNames.member.") {
			i, _ := strconv.Atoi(strings.TrimPrefix(k, "ActionNames.member."))
			for len(asked) < i {
				asked = append(asked, "")
			}
			asked[i-1] = v[0]
		}
	}
	var b strings.Builder
	b.WriteString(`<SimulatePrincipalPolicyResponse xmlns="https://iam.amazonaws.com/doc/2010-05-08/"><SimulatePrincipalPolicyResult><IsTruncated>false</IsTruncated><EvaluationResults>`)
	for _, a := range asked {
		for _, r := range out.EvaluationResults {
			if !strings.EqualFold(deref(r.EvalActionName), a) {
				continue
			}
			fmt.Fprintf(&b, "<member><EvalActionName>%s</EvalActionName><EvalResourceName>%s</EvalResourceName><EvalDecision>%s</EvalDecision><MatchedStatements>",
				xmlEscape(a), xmlEscape(deref(r.EvalResourceName)), r.EvalDecision)
			for _, st := range r.MatchedStatements {
				fmt.Fprintf(&b, "<member><SourcePolicyId>%s</SourcePolicyId><SourcePolicyType>%s</SourcePolicyType></member>", xmlEscape(deref(st.SourcePolicyId)), st.SourcePolicyType)
			}
			b.WriteString("</MatchedStatements><MissingContextValues/></member>")
		}
	}
	b.WriteString(`</EvaluationResults></SimulatePrincipalPolicyResult><ResponseMetadata><RequestId>0c3d1d3e-1111-4000-8000-000000000000</RequestId></ResponseMetadata></SimulatePrincipalPolicyResponse>`)
	w.Header().Set("Content-Type", "text/xml")
	_, _ = w.Write([]byte(b.String()))
}

// ---- STS Query ----

// SetIdentity sets the ARN GetCallerIdentity answers with (default: a user of
// the account the folder's cluster ARN names).
func (s *Server) SetIdentity(arn string) {
	s.mu.Lock()
	s.identity = arn
	s.mu.Unlock()
}

func (s *Server) serveSTS(w http.ResponseWriter, action string, p url.Values) {
	s.record(Call{Service: "sts", Action: action, Params: p}) // GetCallerIdentity needs no permission
	if action != "GetCallerIdentity" {
		http.Error(w, "unknown STS action "+action, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	arn := s.identity
	s.mu.Unlock()
	account := "123456789012"
	var c struct{ Cluster struct{ Arn string } }
	if s.file("eks-describe-cluster.json", &c) {
		if parts := strings.Split(c.Cluster.Arn, ":"); len(parts) > 4 && parts[4] != "" {
			account = parts[4]
		}
	}
	if arn == "" {
		arn = "arn:aws:iam::" + account + ":user/pullpath-fake"
	}
	w.Header().Set("Content-Type", "text/xml")
	fmt.Fprintf(w, `<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetCallerIdentityResult><Arn>%s</Arn><UserId>AIDAPULLPATHFAKE0001</UserId><Account>%s</Account></GetCallerIdentityResult><ResponseMetadata><RequestId>0c3d1d3e-2222-4000-8000-000000000000</RequestId></ResponseMetadata></GetCallerIdentityResponse>`,
		xmlEscape(arn), xmlEscape(account))
}

// members are the values of a Query list parameter (prefix "InstanceId."
// for InstanceId.1, InstanceId.2, ...), in order.
func members(p url.Values, prefix string) []string {
	var out []string
	for i := 1; ; i++ {
		v := p.Get(prefix + strconv.Itoa(i))
		if v == "" {
			return out
		}
		out = append(out, v)
	}
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// Actions lists the distinct actions called, sorted, with their counts.
func (s *Server) Actions() map[string]int {
	out := map[string]int{}
	for _, c := range s.Calls() {
		out[c.Action]++
	}
	return out
}

var _ = sort.Strings

// Environ is the environment of a shell whose AWS default chain finds the
// fake account's credentials and sends every call to the server, as
// KEY=VALUE pairs for t.Setenv or exec.Cmd.Env: static keys, no shared
// config, no instance metadata, one attempt per call. Nothing leaves
// loopback.
func (s *Server) Environ() []string {
	return append([]string{
		"AWS_ACCESS_KEY_ID=AKIAPULLPATHFAKE0001",
		"AWS_SECRET_ACCESS_KEY=pullpath-fake-secret-key-not-a-real-one",
		"AWS_ENDPOINT_URL=" + s.URL,
	}, NoCredentials()...)
}

// ChildEnv is this process's environment with every AWS_ variable
// replaced by env (Environ or NoCredentials), for exec.Cmd.Env: the child
// sees only the AWS settings the test gives it.
func ChildEnv(env []string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") {
			out = append(out, kv)
		}
	}
	return append(out, env...)
}

// NoCredentials is the environment of a shell where the AWS default chain
// finds nothing, fast: every variable it reads is empty or points
// nowhere, and instance metadata is off.
func NoCredentials() []string {
	var env []string
	for _, k := range []string{"AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_SESSION_TOKEN", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"} {
		env = append(env, k+"=")
	}
	return append(env, "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_EC2_METADATA_DISABLED=true", "AWS_MAX_ATTEMPTS=1")
}
