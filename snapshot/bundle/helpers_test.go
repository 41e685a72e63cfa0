package bundle

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
)

const smallDir = "testdata/small"

func mustRead(tb testing.TB, dir string) *engine.Universe {
	tb.Helper()
	u, err := Read(dir)
	if err != nil {
		tb.Fatalf("Read(%s): %v", dir, err)
	}
	return u
}

// copyDir copies the files of src into a new temporary directory.
func copyDir(tb testing.TB, src string) string {
	tb.Helper()
	dst := tb.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return dst
}

var timeType = reflect.TypeFor[time.Time]()

var sourceListType = reflect.TypeFor[engine.SourceList]()

// diff returns the path of the first difference between a and b, or ""
// when they are equal (NaN equals NaN; times compare with Equal).
func diff(a, b any) string {
	return diffValue(reflect.ValueOf(a), reflect.ValueOf(b), "")
}

func diffValue(a, b reflect.Value, path string) string {
	if a.Type() != b.Type() {
		return path + ": types differ"
	}
	if a.Type() == sourceListType { // a pointer to the list: compare the lists
		return diffValue(reflect.ValueOf(a.Interface().(engine.SourceList).All()), reflect.ValueOf(b.Interface().(engine.SourceList).All()), path)
	}
	if a.Type() == timeType {
		ta, tb := a.Interface().(time.Time), b.Interface().(time.Time)
		if !ta.Equal(tb) {
			return fmt.Sprintf("%s: %v != %v", path, ta, tb)
		}
		return ""
	}
	switch a.Kind() {
	case reflect.Float32, reflect.Float64:
		fa, fb := a.Float(), b.Float()
		if fa != fb && !(math.IsNaN(fa) && math.IsNaN(fb)) {
			return fmt.Sprintf("%s: %v != %v", path, fa, fb)
		}
		if fa == 0 && fb == 0 && math.Signbit(fa) != math.Signbit(fb) {
			return fmt.Sprintf("%s: signed zeros differ", path)
		}
	case reflect.Struct:
		for i := range a.NumField() {
			if d := diffValue(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); d != "" {
				return d
			}
		}
	case reflect.Slice:
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: len %d != %d", path, a.Len(), b.Len())
		}
		for i := range a.Len() {
			if d := diffValue(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
	case reflect.Pointer:
		if a.IsNil() != b.IsNil() {
			return path + ": nil differs"
		}
		if !a.IsNil() {
			return diffValue(a.Elem(), b.Elem(), path)
		}
	case reflect.String:
		if a.String() != b.String() {
			return fmt.Sprintf("%s: %q != %q", path, a.String(), b.String())
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if a.Int() != b.Int() {
			return fmt.Sprintf("%s: %d != %d", path, a.Int(), b.Int())
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if a.Uint() != b.Uint() {
			return fmt.Sprintf("%s: %d != %d", path, a.Uint(), b.Uint())
		}
	case reflect.Bool:
		if a.Bool() != b.Bool() {
			return fmt.Sprintf("%s: %v != %v", path, a.Bool(), b.Bool())
		}
	default:
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			return path + ": differ"
		}
	}
	return ""
}

func parseFloatStd(s string) (float64, error) { return strconv.ParseFloat(s, 64) }
