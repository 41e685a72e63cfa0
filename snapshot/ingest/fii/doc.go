// Package fii imports the CVM monthly reports of real-estate investment
// funds (informe mensal de FII, inf_mensal_fii_{geral,complemento,
// ativo_passivo}_YYYY.csv or the yearly inf_mensal_fii_YYYY.zip) into
// listed funds ([]engine.Company of KindFII, company_id = CNPJ digits)
// and their monthly reports ([]engine.FundReport, one per fund, month and
// version). ReadMonthly takes files, archives or directories;
// ReadMonthlyFiles takes opened tables. Monthly.ISIN maps each fund to
// its ISIN, the key that joins it to the quote files' tickers.
//
// Both the column names used up to 2023 (CNPJ_Fundo, Nome_Fundo) and
// those used from 2024 (CNPJ_Fundo_Classe, Nome_Fundo_Classe) are
// accepted. Files are read with cvm.Reader (UTF-8 or ISO-8859-1, CRLF or
// LF) and take cvm.Options (Lenient, Retrieved, Stats).
//
// This package imports only the standard library, engine and
// snapshot/ingest/cvm; it must not import other snapshot packages, httpapi or
// cmd.
package fii
