package aws

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// decodeWithTimes decodes CLI JSON into SDK types. The SDK's timestamps are
// time.Time, whose JSON form is RFC 3339; AWS CLI v2 prints ISO 8601 with an
// offset ("2024-03-01T10:20:30+00:00", "...30.591000+00:00"), which is RFC
// 3339, so the direct decode is the common path. The shim is for the other
// forms the CLI can print (cli_timestamp_format=none gives the wire value:
// epoch seconds for EKS, "2024-03-01T10:20:30.000Z" for EC2; hand-edited
// files drop the offset): on a timestamp error only, the document is walked
// beside the target type and every time.Time member is rewritten to RFC 3339
// before decoding again.
func decodeWithTimes(data []byte, into any) error {
	err := json.Unmarshal(data, into)
	if err == nil || !isTimeError(err) {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return err
	}
	fixed, err := fixTimes(doc, reflect.TypeOf(into), "")
	if err != nil {
		return err
	}
	b, err := json.Marshal(fixed)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}

var timeType = reflect.TypeOf(time.Time{})

func isTimeError(err error) bool {
	var pe *time.ParseError
	if errors.As(err, &pe) {
		return true
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Type == timeType {
		return true
	}
	return strings.Contains(err.Error(), "parsing time") || strings.Contains(err.Error(), "Time.UnmarshalJSON")
}

// fixTimes rewrites the time.Time members of doc (decoded with UseNumber)
// to RFC 3339, following t.
func fixTimes(doc any, t reflect.Type, path string) (any, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == timeType {
		ts, err := parseCLITime(doc)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", strings.TrimPrefix(path, "."), err)
		}
		return ts.Format(time.RFC3339Nano), nil
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := doc.(map[string]any)
		if !ok {
			return doc, nil
		}
		for k, v := range m {
			f, ok := fieldFold(t, k)
			if !ok {
				continue
			}
			nv, err := fixTimes(v, f.Type, path+"."+k)
			if err != nil {
				return nil, err
			}
			m[k] = nv
		}
		return m, nil
	case reflect.Slice, reflect.Array:
		a, ok := doc.([]any)
		if !ok {
			return doc, nil
		}
		for i, v := range a {
			nv, err := fixTimes(v, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			a[i] = nv
		}
		return a, nil
	case reflect.Map:
		m, ok := doc.(map[string]any)
		if !ok {
			return doc, nil
		}
		for k, v := range m {
			nv, err := fixTimes(v, t.Elem(), path+"."+k)
			if err != nil {
				return nil, err
			}
			m[k] = nv
		}
		return m, nil
	}
	return doc, nil
}

func fieldFold(t reflect.Type, name string) (reflect.StructField, bool) {
	if f, ok := t.FieldByName(name); ok && f.IsExported() {
		return f, true
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.IsExported() && strings.EqualFold(f.Name, name) {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

var cliTimeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999-07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02",
}

// parseCLITime reads a timestamp as the CLI may print it: ISO 8601 with or
// without an offset (none means UTC), or epoch seconds.
func parseCLITime(v any) (time.Time, error) {
	switch x := v.(type) {
	case nil:
		return time.Time{}, nil
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1e12 {
			return time.Time{}, fmt.Errorf("timestamp %s is not epoch seconds", x)
		}
		sec, frac := math.Modf(f)
		return time.Unix(int64(sec), int64(math.Round(frac*1e6))*1e3).UTC(), nil
	case string:
		for _, l := range cliTimeLayouts {
			if ts, err := time.Parse(l, x); err == nil {
				return ts, nil
			}
		}
		return time.Time{}, fmt.Errorf("timestamp %q is not ISO 8601", x)
	case map[string]any:
		// placebo's boto3 datetime: {"__class__": "datetime", "year": ..., "microsecond": ...}
		if c, _ := x["__class__"].(string); c == "datetime" {
			n := func(k string) int {
				i, _ := strconv.Atoi(fmt.Sprint(x[k]))
				return i
			}
			return time.Date(n("year"), time.Month(n("month")), n("day"), n("hour"), n("minute"), n("second"), n("microsecond")*1000, time.UTC), nil
		}
	}
	return time.Time{}, fmt.Errorf("timestamp %v is not a string or a number", v)
}
