package cvm

import (
	"archive/zip"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/pregao/pregao/engine"
)

// Filing is what a yearly DFP or ITR archive holds.
type Filing struct {
	Reports []engine.Report      // every statement but DMPL, index attached, sorted (SortReports)
	Shares  []engine.SharesPoint // composicao_capital
	// ShareVersions is the VERSAO of the filing of each of Shares.
	ShareVersions []int
	Index         []DocEntry // the archive's filing index
	// Unmatched counts reports that found no index entry (PublishDate
	// left zero).
	Unmatched int
}

// ReadStatementsZip reads a yearly archive (dfp_cia_aberta_YYYY.zip or
// itr_cia_aberta_YYYY.zip): every statement table (ReadStatements), the
// capital table (ReadCapital) and the filing index (ReadDocIndex), then
// attaches the index to the reports (AttachIndex). Other members
// (parecer...) are counted in Stats.Unused. Members are read one at a
// time, streaming.
func ReadStatementsZip(path string, opt Options) (*Filing, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return ReadFilingZip(f, st.Size(), path, opt)
}

// ReadFilingZip is ReadStatementsZip over an archive held by ra; name
// is used in errors.
func ReadFilingZip(ra io.ReaderAt, size int64, name string, opt Options) (*Filing, error) {
	zr, err := zip.NewReader(ra, size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	out := &Filing{}
	for _, zf := range zr.File {
		if zf.FileInfo().IsDir() || !strings.HasSuffix(strings.ToLower(zf.Name), ".csv") {
			opt.add(func(s *Stats) { s.Unused++ })
			continue
		}
		fi, err := ParseFileName(zf.Name)
		if err != nil || fi.Kind == KindOther {
			opt.add(func(s *Stats) { s.Unused++ })
			continue
		}
		member := name + ":" + zf.Name
		if err := readMember(zf, member, fi, opt, out); err != nil {
			return nil, err
		}
	}
	out.Unmatched = AttachIndex(out.Reports, out.Index)
	SortReports(out.Reports)
	return out, nil
}

func readMember(zf *zip.File, member string, fi FileInfo, opt Options, out *Filing) error {
	rc, err := zf.Open()
	if err != nil {
		return fmt.Errorf("%s: %w", member, err)
	}
	defer rc.Close()
	switch fi.Kind {
	case KindStatement:
		rs, err := readStatements(rc, member, fi, opt)
		if err != nil {
			return err
		}
		out.Reports = append(out.Reports, rs...)
	case KindCapital:
		cp, err := ReadCapitalVersions(rc, member, opt)
		if err != nil {
			return err
		}
		for _, p := range cp {
			out.Shares = append(out.Shares, p.SharesPoint)
			out.ShareVersions = append(out.ShareVersions, p.Version)
		}
	case KindIndex:
		idx, err := ReadDocIndex(rc, member, opt)
		if err != nil {
			return err
		}
		out.Index = append(out.Index, idx...)
	}
	return nil
}
