// Package cotahist reads B3's COTAHIST historical quote files (the
// "Séries Históricas" daily D, monthly M and annual A files, as .TXT or
// .ZIP) and turns them into daily engine.Series.
//
// The format is fixed-width: 245 characters per record, a header record
// (type 00), quote records (type 01) and a trailer record (type 99) whose
// record count must equal the number of lines. Prices and volumes carry two
// implied decimals; prices are quoted per FATCOT shares. Files are
// ISO-8859-1, with CRLF or LF line ends. The Scanner streams: memory does
// not grow with the file size (a ZIP's central directory excepted).
//
// Which records become daily bars: the cash market (TPMERC 010) on the
// standard-lot board (BDI 02) and the other cash boards that carry a
// company's or fund's regular quotes (DefaultBoards), plus, on any other
// board, the records whose ISIN category is a share, unit, BDR or fund
// quota (keptCategories: B3 gives BDRs and new fund kinds boards of their
// own); odd lots (BDI 96, TPMERC 020) on request; options, forwards,
// auctions, rights and the rest are counted and skipped. Options.Boards
// replaces the rule with an exact board list. Prices are BRL: a record
// whose MODREF is not R$ (the cruzeiros and cruzados of the files before
// July 1994) is counted and skipped.
//
// It imports engine and snapshot/ingest/datafile only; it must not import the
// snapshot format, the bundle package or other importers.
package cotahist
