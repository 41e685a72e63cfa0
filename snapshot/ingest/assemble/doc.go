// Package assemble is the import join: it reads whatever official B3 and
// CVM files a Config lists, through the format packages of the ingest
// tree, and joins them into one engine.Universe (Run), with a Report of
// what it read, linked and skipped. "pregao import" is flags and wiring
// around it: it writes the Universe as a source bundle.
//
// It owns the decisions no single format can make: which company a quoted
// ticker belongs to, the ids of issuers known only from the quote files,
// the liquidity ranks, the as-of day, which portfolio of an index is
// imported, and how B3's undated listed-company responses (cash
// dividends, supplement) merge with the rest. Reading and decoding one
// file of one format belongs to that format's package (cotahist, cvm,
// fii, b3), never here.
//
// # Linking tickers to companies
//
// Every COTAHIST ticker becomes a security of one company. Evidence comes
// first; the first rule that applies wins:
//
//  1. The CVM FCA ticker map (valor_mobiliario: the company itself files
//     Codigo_Negociacao under its CNPJ).
//  2. Fund quotas (CI) by ISIN (an exact identifier) to the funds of the
//     CVM FII monthly reports, as of each fund's latest report. An ISIN
//     several funds report goes to the one whose latest report is the
//     most recent; if those are of the same month, to none (isinOwners).
//  3. B3's company details (GetDetailsCompany: B3 names the CNPJ of an
//     issuer and its tickers), by ticker, then by its 4-character root.
//  4. Shares and units: B3's listed-instruments file
//     (InstrumentsConsolidatedFile, or the daily bulletin's export of the
//     same table, InstrumentsEquities; b3.ReadInstruments), which names each
//     cash-market ticker's ISIN and its issuer's legal name (CrpnNm) but
//     no CNPJ. The row of the ticker (with the quote's ISIN), else of the
//     quote's ISIN (a ticker renamed since), of the file's day nearest the
//     last session, links the share when that legal name is the legal
//     name (DENOM_SOCIAL) of exactly one registrant eligible as in rule 6
//     on its last session. The names are compared word for word
//     (sameLegalName): connectors and a final corporate form aside, each
//     word equal or one of B3's abbreviations of it (BCO BRADESCO S.A. is
//     BANCO BRADESCO S.A., CIA BRASILEIRA DE DISTRIBUICAO is Companhia
//     Brasileira de Distribuição), no more words abbreviated than equal.
//     A name no registrant holds (renamed since: VIA S.A. is Grupo Casas
//     Bahia in a later registry) is listed in the summary; the rules
//     below then apply.
//  5. Shares and units: the ISIN's issuer code (BRBBDCACNOR1: BBDC) when
//     the rules above tie that code to one company (the ISIN of a ticker
//     they linked, the root of an FCA ticker, B3's symbol and ISINs): a
//     unit or a class the FCA does not list joins its company.
//  6. Shares and units only, by name alone (guessed, and listed in the
//     summary): one question per issuer code (ticker root), with the
//     COTAHIST short name (NOMRES) of its ticker quoted last, asked of the
//     registry's companies that were active registrants on the last day
//     the code traded (the status in force then, cvm.CadRow.StatusOn) and
//     on the exchange (a row with TP_MERC BOLSA or in Categoria A, the
//     category whose shares may trade on an exchange; TP_MERC alone cannot
//     be required: the registry of 2024-05-27 leaves it blank for 146 active
//     registrations of Categoria A, Raízen S.A.'s among them, and writes BALCÃO ORGANIZADO
//     for Novo Mercado companies such as Irani and Boa Vista Serviços). A
//     name matches (normalized: upper-case letters and digits, accents
//     folded) when it equals the short name (or it plus "SA"), starts with
//     it at a word's end (or anywhere for a short name of 8 characters or
//     more, or of NOMRES's 12, which may be cut), holds its words as a run
//     of whole words or of words they begin ("SID NACIONAL": Cia
//     Siderurgica Nacional; connectors DE, DA, DO, E left out), or has
//     each of them beginning one of its words, in order or, with the
//     issuer code in the name, in any order ("BTGP BANCO": Banco BTG
//     Pactual); loosest, the same without the generic words of NOMRES
//     ("INDS ROMI": Romi S.A.), or the name's initials with the code among
//     them ("TAESA"). B3's abbreviations read too (nameRules; each rule's
//     links on the real files are measured by TestRunNameRulesReal): an
//     ampersand reads E ("CEA MODAS": C&A Modas); a corporate form glued to
//     a one-word short name is left out ("ATMASA", "PETRORECSA",
//     "ATOMPAR"); the words may be whole words, or prefixes of 3 letters
//     or more no more numerous than the whole ones, in another order
//     ("LOJAS MARISA": Marisa Lojas, "GERDAU MET": Metalúrgica Gerdau); a
//     trailing BR (Brasil) is left out when the rest matches as whole
//     words and the name holds the issuer code ("GETNET BR"; "PETROBRAS
//     BR", BRDT, is not Petróleo Brasileiro); a word may abbreviate one by
//     its letters in order, as many equal words vouching for it ("EQTL
//     PARA": Equatorial Pará, "MANGELS INDL": Mangels Industrial). The
//     names asked are every name of a registrant in the registry and, for
//     a code that last traded before the registrant's rename, the former
//     name the FCA's geral table gives with its date
//     (Nome_Empresarial_Anterior, Data_Nome_Empresarial: DURATEX was
//     Duratex S.A., Dexco since). The registrants matched are ranked: an equal name
//     first (a sibling of another line of business only starts with the
//     short name: BANRISUL is Banrisul S/A, not Banrisul Armazéns Gerais),
//     then the issuer code's letters in the name in order (BBDC is in
//     Banco Bradesco, not in Bradesco Leasing), then fewer words of the
//     name left unaccounted for, then the closer match, then TP_MERC
//     BOLSA. The best is taken when it is strictly better than the next;
//     a registrant taken so by one code leaves the ties of the others
//     ("BRASIL" ties Banco do Brasil with Banco ABC Brasil and IRB Brasil
//     until ABCB and IRBR take theirs); what is still tied is ambiguous:
//     left unlinked and listed with its candidates (nameIndex.resolve).
//     Without a registry (no --cad) a company's own status stands in for
//     its rows: only ACTIVE ones are found.
//  7. Otherwise a minimal issuer is created from the quote file: name
//     NOMRES, kind COMPANY, BDR (sponsored for DR1, DR2 and DR3, not DRN)
//     or, for fund quotas, FII (board 12 or a listed FII, unless listed as
//     an ETF) or ETF; status ACTIVE when the ticker traded in the last
//     session of the files, else unknown; and a 10-digit synthetic
//     company_id (syntheticID: "99" shares, "98" funds, "97" BDRs, then
//     two digits per root character), which never collides with a CNPJ
//     (14 digits) or a CVM code (6 at most). This happens only when no
//     registrant could be tied (or the tie was ambiguous).
//
// The summary counts the links of each kind of evidence and lists every
// name-only link with how its name matched, and every ambiguous share.
//
// A link is used only when the company's kind fits the security (kindOK:
// BDR issuers have BDRs, funds have fund quotas, companies have shares);
// otherwise the next rule is tried. A company without a symbol takes the
// ticker's root unless another company holds it. FCA listings give their
// securities' listing dates and fill, where empty, a company's symbol,
// listing segment and IPO date; a symbol then claimed twice stays with the
// lowest company_id. A unit takes its composition (shares per unit,
// Security.UnitFactor) from the FCA's Composicao_BDR_Unit (cvm.UnitShares):
// by its ticker, else the company's one unit composition (some FCAs write
// no real ticker on the unit's row); the summary lists the units left
// without one (no per-share ratios). B3's instruments file, the other
// official file about units, gives none: its columns name a unit's
// ISIN, category (UNIT) and SpcfctnCd ("UNT N2"), not the shares it
// holds. FCA geral
// rows fill a company's website, description and founding date where
// empty; the head-office address of its latest FCA (endereco) replaces
// the registry's.
//
// # What is kept, dropped and counted
//
// Tickers the bundle format does not accept (engine.ValidTicker: odd-lot
// "F" and receipt suffixes such as BBFI11B) are skipped and listed. The liquidity
// rank of a ticker is its place by BRL volume over the last 21 sessions
// of the data (1 = most traded; ties by ticker; no trade then: no rank).
// Reports and share counts of companies absent from the registry are
// dropped and counted. CVM's yearly DFP and ITR files hold the latest
// version of each filing only, so the versions of a restated filing are
// kept by importing every download of the year: a filing version two
// inputs repeat is imported once and counted, the share count of a
// company and date is the highest version's, and one version given with
// two sets of figures is an error. Companies without a sector hang from a four-level
// "unclassified" chain (UNCLASSIFIED...). FII monthly money and rates keep
// their sign as filed (negative dividend yields, returns, net and total
// assets are real data); a negative share or investor count, which the
// bundle format rejects, is imported as missing and counted.
//
// # Indexes
//
// Index members that are not among the quoted tickers are kept in their
// portfolio (served, not ranked) and counted. Per index symbol the latest
// portfolio dated on or before the as-of day is served (a weighted one
// over a membership list of the same day); an index with none on or
// before it is served with the earliest one after it, the closest to that
// day. The summary notes every portfolio passed over and every index
// served with a portfolio dated after the as-of day.
//
// # The as-of rule
//
// The as-of time is 21:00 UTC (18:00 in São Paulo, the end of the
// session) of Config.AsOf if given, else of the last COTAHIST session:
// the snapshot's "now" is the day its quotes end, so default quote
// windows are never empty; reports dated later are kept and counted in
// the summary, which states the rule used. It stamps the retrieval time of CVM data
// unless Config.Retrieved is given, so the same inputs give the same
// Universe. B3's listed-company responses carry no date: the share counts
// of a supplement are dated the as-of day, and a GetTheoricalPortfolio
// response is dated as of too.
//
// # Imports
//
// It may import engine and the packages of snapshot/ingest only, never
// snapshot (the file format), snapshot/bundle, httpapi or cmd
// (cmd/pregao's TestImportRules enforces it); the ticker rule it keeps
// tickers by is the bundle's, engine.ValidTicker. Errors name an input by its pregao import flag (--cotahist...),
// the one command that runs it.
package assemble
