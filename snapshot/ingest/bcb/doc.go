// Package bcb reads the Banco Central do Brasil's open data that Pregão
// serves as macro series (securities of stock type MACRO, without a
// company): the SGS time series of the policy rate, inflation and the
// interbank rate, and the PTAX closing exchange rates of every currency
// the Banco Central publishes. It turns them into engine.Security and
// engine.Series values (Read), one series per ticker of the mapping
// (Mapping, below).
//
// # The SGS answers
//
// The SGS ("Sistema Gerenciador de Séries Temporais") answers
// https://api.bcb.gov.br/dados/serie/bcdata.sgs.CODE/dados?formato=json&dataInicial=dd/mm/aaaa&dataFinal=dd/mm/aaaa
// with a JSON array of {"data": "dd/mm/yyyy", "valor": "4.50"} objects in
// date order: the value is a string with a decimal point; a monthly
// series is dated on the first day of its month. With formato=csv it
// answers the same records as ";"-separated text under the header
// "data";"valor", fields in double quotes, the value with a decimal comma
// ("1,27"). ReadSGS reads both, telling them apart by the first byte.
// Since March 2025 a request for a daily series covers at most 10 years
// (an answer 406 {"error": "O sistema aceita uma janela de consulta de,
// no máximo, 10 anos em séries de periodicidade diária", ...}); a window
// without values answers 404. The Banco Central's firewall may answer
// a request it rejects with an HTML page ("Requisição inválida!") and
// status 200: ReadSGS refuses it, naming it, rather than reading no
// value. Evidence: raw answers of series 432 and 433 stored byte for
// byte by JuanRocha01/ML-ETTJ26 (data/01_raw/bcb/sgs/, commit c3e06093,
// fetched 2026-02-13 in 10-year windows, two of which are that rejection
// page), kept in testdata/real/bcb-sgs; the 10-year message as
// wilsonfreitas/python-bcb issue 19 and wilsonfreitas/rbcb issue 64
// quote it; the CSV header and decimal comma as public scripts show it
// ("data";"valor", "01/06/1986";"1,27").
//
// # The PTAX closing rates
//
// Every business day at about 13:10 in Brasília the Banco Central
// publishes the PTAX closing rates of every currency it quotes (some 155:
// the ten convertible currencies of its Olinda PTAX service, USD, EUR,
// GBP, JPY, CHF, CAD, AUD, SEK, NOK and DKK, and the others, ARS and CNY
// among them, that service does not carry) in one file,
// https://www4.bcb.gov.br/Download/fechamento/YYYYMMDD.csv; a day without
// a bulletin (a weekend, a national holiday) answers 404. Each line is
// one currency, ";"-separated, without a header, numbers with a decimal
// comma:
//
//	31/07/2026;220;A;USD;5,07670000;5,07730000;1,00000000;1,00000000
//
// date (dd/mm/yyyy; the Banco Central's per-period CSV writes ddmmyyyy,
// also read), the Banco Central's currency code, the type (A: the parity
// is units of the currency per US dollar; B: US dollars per unit), the
// ISO 4217 code, the buy and sell rates in BRL per unit of the currency,
// and the buy and sell parities. ReadClosing reads it. Evidence: the
// file of 2026-07-31 (testdata/real/bcb-ptax, from Wigny/ptax
// test/support/20260731.csv), whose USD row equals the Olinda
// CotacaoDolarPeriodo answer of that day that another repository
// captured (cotacaoCompra 5.07670, cotacaoVenda 5.07730); the URL as
// public clients call it, one of which notes that CNY is in this file and
// not in the Olinda catalogue. The Olinda service was not chosen: it
// carries the ten currencies only, and its bulletins (opening,
// intermediate, closing) of one currency take one request each, where
// this file gives every currency's closing rate in one.
//
// # Mapping
//
// Each ticker is one series in one unit, with the meaning of the demo
// universe's series of the same name (package demo):
//
//	ticker  source                 unit              meaning
//	SELIC   SGS 432                % per year        the Copom's Selic target in force that day (not the effective rate, SGS 11 or 1178)
//	IPCA    SGS 433                % in the month    the IPCA's change in its month (IBGE; not the index level), dated the 1st of the month
//	CDI     SGS 4389               % per year        the CDI (DI rate), annualized on 252 business days (not the daily rate, SGS 12)
//	USD...  PTAX closing file      BRL per unit      the PTAX sell rate of the day's closing bulletin, one series per ISO code
//
// Open, high and low are null (one value a day, not a range), volume is
// null. Points are kept on the day the Banco Central dates them, with
// these rules:
//
//   - No point is invented: a day the source has no value for (a
//     holiday, a weekend) has no point, never a zero or a carried value;
//     a record without a value is skipped and counted. A value of 0 (the
//     IPCA of June 2010, 0.00) is a value.
//   - The SGS publishes the Selic target for every calendar day; SELIC
//     keeps the business days only (weekdays other than national
//     holidays: BusinessDay), the days CDI and PTAX have values, as the
//     demo's SELIC has one point per session.
//   - Point in time: a snapshot of as-of day A holds only the points
//     published by then. The Selic target of a day is known on it (the
//     Copom decides it before), the PTAX of a day at 13:10 of it; the CDI
//     of a day is published the next day (known from the day after); the
//     IPCA of a month is published by IBGE around the 10th of the next
//     month, on a day its calendar sets (known from the 15th of the next
//     month: a margin, so that no figure is served before its release).
//   - Revisions: the Banco Central corrects a published value by
//     publishing the date again with the new value. Within one file the
//     later record of a date wins; across files, the later input (inputs
//     are read in the order given; a folder's files in name order) wins.
//     Such a date is counted in Stats.Revised (different value) or
//     Stats.Repeated (same value).
//
// It imports engine and snapshot/ingest/datafile only; it must not import
// the snapshot format, the bundle package or other importers.
package bcb
