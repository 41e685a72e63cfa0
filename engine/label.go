package engine

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Label is a short word a report or a cash action is classified by (a
// report's statement, aggregation and form: "DRE", "CONSOLIDATED",
// "ITR"; a cash action's stock type, name, code and currency), held as
// a byte: a report keeps three of them in 3 bytes instead of three
// strings. The words are numbered once per process (LabelOf) and never
// forgotten; the zero Label is "". A process holds at most 256 of them: every
// source of reports allows a handful (engine.Statements, Aggregations,
// the forms), cash actions a few more, and a reader refuses more
// (LabelOf's false).
type Label uint8

// The Labels every process numbers first, in this order (init): the
// statements in engine.Statements' order, the aggregations, the forms.
const (
	LabelNone Label = iota // ""
	LabelBPA
	LabelBPP
	LabelDRE
	LabelDRA
	LabelDVA
	LabelDFCMI
	LabelDFCMD
	LabelIndividual
	LabelConsolidated
	LabelDFP
	LabelITR
)

// labelNames holds the words by number (a []string replaced whole on
// every addition, so String is one atomic load).
var (
	labelNames atomic.Pointer[[]string]
	labelMu    sync.Mutex
	labelIndex = map[string]Label{}
)

func init() {
	names := []string{""}
	labelIndex[""] = 0
	for _, s := range append(append(append([]string{}, Statements...), AggIndividual, AggConsolidated), "DFP", "ITR") {
		labelIndex[s] = Label(len(names))
		names = append(names, s)
	}
	labelNames.Store(&names)
}

// LabelOf returns the Label of s, numbering it on first use; false when
// the process already holds 256 words and s is not one of them.
func LabelOf(s string) (Label, bool) {
	names := *labelNames.Load()
	for i, n := range names { // a dozen words: faster than the map
		if n == s {
			return Label(i), true
		}
	}
	labelMu.Lock()
	defer labelMu.Unlock()
	if l, ok := labelIndex[s]; ok {
		return l, true
	}
	names = *labelNames.Load()
	if len(names) > 255 {
		return 0, false
	}
	l := Label(len(names))
	s = string([]byte(s)) // keep no caller's buffer
	grown := append(names[:len(names):len(names)], s)
	labelIndex[s] = l
	labelNames.Store(&grown)
	return l, true
}

// MustLabel is LabelOf for words a program knows are few (its own
// constants, validated input); past 256 words it returns the zero Label.
func MustLabel(s string) Label {
	l, _ := LabelOf(s)
	return l
}

// String returns the word.
func (l Label) String() string {
	names := *labelNames.Load()
	if int(l) < len(names) {
		return names[l]
	}
	return ""
}

// Compare orders Labels as their words (strings.Compare): the numbers
// follow the order words were first met, not the alphabet, so sort by
// Compare, never by < on Labels.
func (l Label) Compare(o Label) int {
	if l == o {
		return 0
	}
	return strings.Compare(l.String(), o.String())
}

// MarshalJSON encodes l as its word.
func (l Label) MarshalJSON() ([]byte, error) { return json.Marshal(l.String()) }

// UnmarshalJSON decodes a word; more words than a Label holds is an error.
func (l *Label) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, ok := LabelOf(s)
	if !ok {
		return errTooManyLabels
	}
	*l = v
	return nil
}

// errTooManyLabels is UnmarshalJSON's error past 256 words.
var errTooManyLabels = errors.New("more than 256 distinct words: report statements, aggregations and forms, cash stock types, names, codes and currencies")

// reportJSON is a Report as JSON spells it (the bundle's object): the
// words and times as before Report held Labels and Stamps, in the same
// order.
type reportJSON struct {
	CompanyID     string    `json:"company_id"`
	Statement     string    `json:"statement"`
	Aggregation   string    `json:"aggregation"`
	Form          string    `json:"form"`
	ReferenceDate Date      `json:"reference_date"`
	StartDate     Date      `json:"start_date"`
	EndDate       Date      `json:"end_date"`
	PublishDate   time.Time `json:"publish_date"`
	RetrievalDate time.Time `json:"retrieval_date"`
	Version       int       `json:"version"`
	Accounts      []Account `json:"accounts"`
	Sources       []Source  `json:"sources"`
}

// MarshalJSON encodes r as the bundle's report object (accounts with
// the process's lines).
func (r Report) MarshalJSON() ([]byte, error) {
	v := reportJSON{r.CompanyID, r.Statement.String(), r.Aggregation.String(), r.Form.String(),
		r.ReferenceDate, r.StartDate, r.EndDate, r.PublishDate.Time(), r.RetrievalDate.Time(), r.Version, r.Accounts, r.Sources.All()}
	if r.Lines != nil && r.Accounts != nil {
		l := r.AccountList()
		v.Accounts = make([]Account, l.Len())
		for i := range v.Accounts {
			v.Accounts[i] = l.At(i)
		}
	}
	return json.Marshal(v)
}

// UnmarshalJSON decodes what MarshalJSON writes; a field absent keeps
// r's value, as for a struct decoded field by field. Accounts decoded are
// in the process's lines (r.Lines is dropped with r's accounts) and go to
// a new array: r's may lie in a read-only mapped file, and may number
// their lines in its table. Absent or null accounts keep r's, lines and
// all.
func (r *Report) UnmarshalJSON(b []byte) error {
	v := reportJSON{r.CompanyID, r.Statement.String(), r.Aggregation.String(), r.Form.String(),
		r.ReferenceDate, r.StartDate, r.EndDate, r.PublishDate.Time(), r.RetrievalDate.Time(), r.Version, nil, r.Sources.All()}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	lines := r.Lines
	if v.Accounts == nil {
		v.Accounts = r.Accounts
	} else {
		lines = nil
	}
	var labels [3]Label
	for i, s := range [...]string{v.Statement, v.Aggregation, v.Form} {
		l, ok := LabelOf(s)
		if !ok {
			return errTooManyLabels
		}
		labels[i] = l
	}
	*r = Report{Lines: lines, CompanyID: v.CompanyID, Statement: labels[0], Aggregation: labels[1], Form: labels[2],
		ReferenceDate: v.ReferenceDate, StartDate: v.StartDate, EndDate: v.EndDate,
		PublishDate: StampOf(v.PublishDate), RetrievalDate: StampOf(v.RetrievalDate), Version: v.Version,
		Accounts: v.Accounts, Sources: SourcesOf(v.Sources)}
	return nil
}

// SharedList is a list held by one pointer, 8 bytes in the struct that
// holds it instead of a slice's 24, so that the millions of reports and
// cash actions a snapshot holds can share lists. The zero SharedList is
// absent (nil), distinct from an empty list. A list is not modified once
// made.
type SharedList[T any] struct{ p *[]T }

// All returns the list (nil when absent).
func (l SharedList[T]) All() []T {
	if l.p == nil {
		return nil
	}
	return *l.p
}

// Len returns the length of the list.
func (l SharedList[T]) Len() int { return len(l.All()) }

// SourceList is a report's sources: the reports citing the same
// documents share one list (a snapshot's loader gives them one copy).
// SourcesOf([]Source{}) is empty.
type SourceList = SharedList[Source]

// SourcesOf returns the SourceList of s (nil: absent).
func SourcesOf(s []Source) SourceList {
	if s == nil {
		return SourceList{}
	}
	return SourceList{&s}
}
