//! Searching the tantivy index: BM25 (lexical search, and hybrid search's
//! lexical side over its candidates) and hybrid search, which fuses it
//! with the dense ranking of the chunk vectors.

use std::cmp::Reverse;
use std::collections::HashSet;

use rayon::prelude::*;
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, EnableScoring, Occur, Query, TermQuery};
use tantivy::schema::{IndexRecordOption, Value};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{DocAddress, Searcher, TantivyDocument, Term};

use super::{Index, analyse, analyzer};
use crate::fusion::{self, Fusion, LexicalCandidates, LexicalHit};
use crate::query::strip_question_words;
use crate::score::{self, QueryTerm};
use crate::top::TopWithTies;
use crate::{Chunk, Hit, Result};

/// Field boosts: the body counts fully; the section label and page title help
/// a chunk match what its page is about.
const BOOST_TEXT: f32 = 1.0;
const BOOST_SECTION: f32 = 0.5;
const BOOST_TITLE: f32 = 0.5;

/// The fields BM25 ranks by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bm25Fields {
    /// The body, the section label and the page title, each boosted
    /// (`BOOST_*`): lexical search, where the headings are all a chunk
    /// without them in its body has to say what it is about.
    All,
    /// The body alone: hybrid search's lexical side. The dense side
    /// embeds the section label with the body, so the headings' words
    /// already weigh there, and every chunk of a page (or a section)
    /// shares them, which does not tell its chunks apart. One scorer per
    /// term rather than three: on the chat-style questions (a dozen terms,
    /// some in a third of the chunks) BM25 at the fusion's depth was the
    /// tail of hybrid search at a million chunks (`bench/src/bin/hybrid_scale`,
    /// `search_hybrid` p99 in paired runs: 35.7-37.7 ms with the three
    /// fields, 28.2-30.7 over the body). Retrieval did not lose
    /// (`bench/src/bin/fusion.rs`, paraphrased questions, gold page in the top
    /// 1 / 3 / 5: 45 / 53 / 56 of 60 against 44 / 51 / 57 with the three
    /// fields; held out 27 / 33 / 35 against 27 / 32 / 36; `eval questions`
    /// with the model answers as many with the fact and refuses as many
    /// unanswerable ones). Over hybrid search's candidates only
    /// ([`fusion::lexical_candidates`]; `Index::set_lexical_candidates`).
    Body,
}

impl Index {
    /// The query's distinct analysed terms with their idf over this index.
    pub fn query_terms(&self, query: &str) -> Result<Vec<QueryTerm>> {
        let searcher = self.reader.searcher();
        let n = searcher.num_docs();
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for term in analyse(&strip_question_words(query)) {
            if !seen.insert(term.clone()) {
                continue;
            }
            let mut df = 0;
            for field in [self.fields.text, self.fields.section, self.fields.title] {
                df = df.max(searcher.doc_freq(&Term::from_field_text(field, &term))?);
            }
            out.push(QueryTerm {
                idf: score::idf(df, n),
                term,
            });
        }
        Ok(out)
    }

    /// The top `k` chunks for `query` by BM25, each with its normalised score
    /// (see the crate docs). Never fails on user syntax: the query is built
    /// from analysed terms, not parsed. Empty when no term survives analysis.
    pub fn search(&self, query: &str, k: usize) -> Result<Vec<Hit>> {
        let terms = self.query_terms(query)?;
        let searcher = self.reader.searcher();
        let mut hits = Vec::new();
        let mut analyzer = analyzer();
        for (raw, _, addr) in self.bm25_top(&searcher, &terms, k, Bm25Fields::All)? {
            let chunk = self.chunk_from_doc(&searcher.doc(addr)?);
            let score = coverage_of(&terms, &chunk, &mut analyzer);
            hits.push(Hit {
                chunk,
                score,
                raw_score: raw,
                units: None,
            });
        }
        Ok(hits)
    }

    /// The top `k` chunks by BM25 with their raw score, id and address;
    /// equal scores in chunk id order, so the order does not depend on
    /// how ingest laid the documents out in segments (tantivy lists
    /// segments in no fixed order, and two writer threads share documents
    /// out as they come). The ids of the documents tied with the `k`-th
    /// are read before they decide, up to `k` + [`MAX_TIES_READ`] in all
    /// (with every document scoring more): a query that only matches
    /// words every copy of a boilerplate section shares must not read
    /// thousands of documents.
    fn bm25_top(
        &self,
        searcher: &Searcher,
        terms: &[QueryTerm],
        k: usize,
        fields: Bm25Fields,
    ) -> Result<Vec<(f32, String, DocAddress)>> {
        if terms.is_empty() || k == 0 {
            return Ok(Vec::new());
        }
        let hits = self.bm25(searcher, terms, k, fields)?;
        let addrs: Vec<DocAddress> = hits.iter().map(|h| h.1).collect();
        let out = hits
            .into_iter()
            .zip(self.ids_of(searcher, &addrs)?)
            .map(|((raw, addr), id)| (raw, id, addr))
            .collect();
        Ok(best_first(out, k))
    }

    /// The chunk id of the document at each of `addrs`: from the `id`
    /// column when the index has one (each a look-up in its dictionary),
    /// else from the stored documents (each a block of the store
    /// decompressed: for hybrid search's hundred BM25 hits, 7% of its CPU
    /// at a million chunks). Indexes created before the column keep their
    /// schema, without it.
    fn ids_of(&self, searcher: &Searcher, addrs: &[DocAddress]) -> Result<Vec<String>> {
        let schema = searcher.schema();
        if !schema.get_field_entry(self.fields.id).is_fast() {
            return addrs
                .iter()
                .map(|&addr| self.stored_id(searcher, addr))
                .collect();
        }
        let mut columns = vec![None; searcher.segment_readers().len()];
        let mut out = Vec::with_capacity(addrs.len());
        for &addr in addrs {
            let column = match &mut columns[addr.segment_ord as usize] {
                Some(column) => column,
                slot => slot.insert(
                    searcher
                        .segment_reader(addr.segment_ord)
                        .fast_fields()
                        .str(schema.get_field_name(self.fields.id))?,
                ),
            };
            let mut id = String::new();
            let ord = column
                .as_ref()
                .and_then(|c| Some((c, c.ords().first(addr.doc_id)?)));
            let found = match ord {
                Some((column, ord)) => column
                    .ord_to_str(ord, &mut id)
                    .map_err(tantivy::TantivyError::from)?,
                None => false,
            };
            // A document the column misses (none should) is read whole.
            out.push(if found {
                id
            } else {
                self.stored_id(searcher, addr)?
            });
        }
        Ok(out)
    }

    /// The chunk id of the document at `addr`, from the document store.
    fn stored_id(&self, searcher: &Searcher, addr: DocAddress) -> Result<String> {
        let doc: TantivyDocument = searcher.doc(addr)?;
        Ok(doc
            .get_first(self.fields.id)
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default())
    }

    /// BM25's candidates for the top `k` ([`TopWithTies`]). The largest
    /// segment is searched first; the `k`-th score it finds is the floor
    /// of the others, searched on all cores: block-max WAND skips every
    /// block that cannot reach it. Each segment is searched from a floor
    /// fixed before it starts, so the result never depends on which core
    /// finished first (a score summed after other skips can differ in its
    /// last bit, and near-copies tie on it).
    fn bm25(
        &self,
        searcher: &Searcher,
        terms: &[QueryTerm],
        k: usize,
        fields: Bm25Fields,
    ) -> Result<Vec<(f32, DocAddress)>> {
        let query = self.bm25_query(searcher, terms, fields)?;
        let weight = query.weight(EnableScoring::enabled_from_searcher(searcher))?;
        let read = k + MAX_TIES_READ;
        let segments = searcher.segment_readers();
        let search = |ord: usize, floor: Option<f32>| -> Result<Vec<(f32, DocAddress)>> {
            let segment = &segments[ord];
            let mut top = TopWithTies::with_floor(k, read, floor);
            // The scorer also visits deleted documents (a file re-ingested
            // or removed leaves its old chunks until a merge).
            let alive = segment.alive_bitset();
            weight.for_each_pruning(top.threshold(), segment, &mut |doc, score| {
                if alive.is_some_and(|a| a.is_deleted(doc)) {
                    return top.threshold();
                }
                top.offer(score, DocAddress::new(ord as u32, doc))
            })?;
            Ok(top.finish())
        };
        let Some(largest) =
            (0..segments.len()).max_by_key(|&s| (segments[s].max_doc(), Reverse(s)))
        else {
            return Ok(Vec::new());
        };
        let first = search(largest, None)?;
        let floor = first.get(k - 1).map(|h| h.0);
        let rest: Vec<Vec<(f32, DocAddress)>> = (0..segments.len())
            .into_par_iter()
            .filter(|&s| s != largest)
            .map(|s| search(s, floor))
            .collect::<Result<_>>()?;
        Ok(TopWithTies::merge(k, read, rest.into_iter().chain([first])))
    }

    /// BM25's query for analysed terms: each term in each of `fields`,
    /// boosted by field, over every document holding one (`Bm25Fields::All`)
    /// or over hybrid search's candidates ([`fusion::lexical_candidates`]
    /// of the terms' document frequencies in the body, the field ranked:
    /// `Bm25Fields::Body`). A candidate's score is the same sum either way.
    fn bm25_query(
        &self,
        searcher: &Searcher,
        terms: &[QueryTerm],
        fields: Bm25Fields,
    ) -> Result<BooleanQuery> {
        let all = [
            (self.fields.text, BOOST_TEXT),
            (self.fields.section, BOOST_SECTION),
            (self.fields.title, BOOST_TITLE),
        ];
        let (fields, candidates) = match fields {
            Bm25Fields::All => (&all[..], LexicalCandidates::Every),
            Bm25Fields::Body => {
                let dfs = terms
                    .iter()
                    .map(|t| searcher.doc_freq(&Term::from_field_text(self.fields.text, &t.term)))
                    .collect::<tantivy::Result<Vec<u64>>>()?;
                let candidates = fusion::lexical_candidates(&dfs, self.lexical_candidates);
                (&all[..1], candidates)
            }
        };
        // Each of the terms `which` in each field, as clauses of `occur`.
        let clauses = |which: &[usize], occur: Occur| -> Vec<(Occur, Box<dyn Query>)> {
            let mut out: Vec<(Occur, Box<dyn Query>)> = Vec::new();
            for &i in which {
                for &(field, boost) in fields {
                    let q = TermQuery::new(
                        Term::from_field_text(field, &terms[i].term),
                        IndexRecordOption::WithFreqs,
                    );
                    out.push((occur, Box::new(BoostQuery::new(Box::new(q), boost))));
                }
            }
            out
        };
        // The candidates' terms are required (one of them, or both); the
        // others still add to a candidate's score.
        let (required, mut query) = match candidates {
            LexicalCandidates::Every => {
                let every: Vec<usize> = (0..terms.len()).collect();
                return Ok(BooleanQuery::new(clauses(&every, Occur::Should)));
            }
            LexicalCandidates::AnyOf(taken) => {
                let any: Box<dyn Query> =
                    Box::new(BooleanQuery::new(clauses(&taken, Occur::Should)));
                (taken, vec![(Occur::Must, any)])
            }
            LexicalCandidates::BothOf(a, b) => (vec![a, b], clauses(&[a, b], Occur::Must)),
        };
        let rest: Vec<usize> = (0..terms.len()).filter(|i| !required.contains(i)).collect();
        query.extend(clauses(&rest, Occur::Should));
        Ok(BooleanQuery::new(query))
    }

    /// The two rankings hybrid search fuses: the [`fusion::DENSE_DEPTH`]
    /// chunks most similar to `vector` and BM25's hits, by similarity
    /// (`VectorStore::rank_for`: exact, or through the approximate index of
    /// a large store), and BM25's top `lexical_depth` by the body alone
    /// (`Bm25Fields::Body`; chunk ids and raw scores).
    pub fn rankings(
        &self,
        query: &str,
        vector: &[f32],
        lexical_depth: usize,
    ) -> Result<(Vec<crate::vectors::DenseHit>, Vec<LexicalHit>)> {
        let terms = self.query_terms(query)?;
        self.rankings_to(&terms, vector, lexical_depth, fusion::DENSE_DEPTH)
    }

    /// [`Index::rankings`] of the query's `terms`, the dense one to
    /// `dense_depth`.
    fn rankings_to(
        &self,
        terms: &[QueryTerm],
        vector: &[f32],
        lexical_depth: usize,
        dense_depth: usize,
    ) -> Result<(Vec<crate::vectors::DenseHit>, Vec<LexicalHit>)> {
        self.rankings_with(terms, || Ok(vector.to_vec()), lexical_depth, dense_depth)
    }

    /// [`Index::rankings_to`] with the vector from `embed`. BM25 runs
    /// beside the embedding and the approximate index's proposals, the
    /// two sides sharing the cores (rayon); then the proposals and BM25's
    /// hits are scored exactly.
    fn rankings_with(
        &self,
        terms: &[QueryTerm],
        embed: impl FnOnce() -> Result<Vec<f32>> + Send,
        lexical_depth: usize,
        dense_depth: usize,
    ) -> Result<(Vec<crate::vectors::DenseHit>, Vec<LexicalHit>)> {
        let (lexical, dense_side) = rayon::join(
            || {
                self.bm25_top(
                    &self.reader.searcher(),
                    terms,
                    lexical_depth,
                    Bm25Fields::Body,
                )
            },
            || {
                embed().map(|vector| {
                    let shortlist = self.vectors.shortlist(&vector);
                    (vector, shortlist)
                })
            },
        );
        let (vector, shortlist) = dense_side?;
        let lexical: Vec<LexicalHit> = lexical?
            .into_iter()
            .map(|(raw, id, _)| LexicalHit { id, raw })
            .collect();
        let ids: Vec<&str> = lexical.iter().map(|h| h.id.as_str()).collect();
        let dense = self
            .vectors
            .rank_shortlist(shortlist, &vector, dense_depth, &ids)?;
        Ok((dense, lexical))
    }

    /// Hybrid search: the top `k` chunks by `fusion` of the dense ranking
    /// (the query's vector `vector`, of the model the index was ingested
    /// with; exact, or through the approximate index from
    /// `vectors::ANN_MIN_CHUNKS` chunks) and BM25; each hit's score is
    /// [`fusion::hybrid_score`] of its cosine and lexical coverage.
    pub fn search_hybrid(
        &self,
        query: &str,
        vector: &[f32],
        k: usize,
        fusion: &Fusion,
    ) -> Result<Vec<Hit>> {
        self.search_hybrid_with(query, || Ok(vector.to_vec()), k, fusion)
    }

    /// [`Index::search_hybrid`] with the query's vector from `embed`,
    /// which runs while BM25 searches: an embedding model's time overlaps
    /// the lexical search's. Its error is returned as it is.
    pub fn search_hybrid_with(
        &self,
        query: &str,
        embed: impl FnOnce() -> Result<Vec<f32>> + Send,
        k: usize,
        fusion: &Fusion,
    ) -> Result<Vec<Hit>> {
        if k == 0 {
            return Ok(Vec::new());
        }
        let terms = self.query_terms(query)?;
        // A k beyond the dense depth's guarantee reads deeper.
        let depth = fusion::DENSE_DEPTH.max(4 * k);
        let (dense, lexical) = self.rankings_with(&terms, embed, fusion.lexical_depth, depth)?;
        let mut hits = Vec::new();
        let mut analyzer = analyzer();
        for f in fusion::fuse(&dense, &lexical, fusion, k) {
            let Some(chunk) = self.chunk_by_key(&f.key, &f.id)? else {
                continue;
            };
            let coverage = coverage_of(&terms, &chunk, &mut analyzer);
            hits.push(Hit {
                score: fusion::hybrid_score(f.cosine, coverage),
                chunk,
                raw_score: f.raw,
                units: self.vectors.units_of(&f.key, &f.id)?,
            });
        }
        Ok(hits)
    }

    /// The chunk `id` of the file `key`.
    fn chunk_by_key(&self, key: &str, id: &str) -> Result<Option<Chunk>> {
        let term = |field, text: &str| -> Box<dyn Query> {
            Box::new(TermQuery::new(
                Term::from_field_text(field, text),
                IndexRecordOption::Basic,
            ))
        };
        let query = BooleanQuery::new(vec![
            (Occur::Must, term(self.fields.key, key)),
            (Occur::Must, term(self.fields.id, id)),
        ]);
        let searcher = self.reader.searcher();
        let top = searcher.search(&query, &TopDocs::with_limit(1).order_by_score())?;
        match top.first() {
            Some(&(_, addr)) => Ok(Some(self.chunk_from_doc(&searcher.doc(addr)?))),
            None => Ok(None),
        }
    }
}

/// At most `k` + this many documents tied at the cut are read to order
/// the tie.
const MAX_TIES_READ: usize = 256;

/// The first `k` of `hits` by score, then id: what makes equal scores come
/// out in the same order on every index of the same documents.
fn best_first<T>(mut hits: Vec<(f32, String, T)>, k: usize) -> Vec<(f32, String, T)> {
    hits.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    hits.truncate(k);
    hits
}

/// The lexical normalised score of a chunk: the IDF-weighted share of the
/// query terms its title, section or text contain.
/// `analyzer` is one [`analyzer`], shared by the hits of a search: building
/// one allocates its stop words, and its memory of stems serves them all.
fn coverage_of(terms: &[QueryTerm], chunk: &Chunk, analyzer: &mut TextAnalyzer) -> f32 {
    let mut present: HashSet<&str> = HashSet::new();
    for text in [&chunk.title, &chunk.section, &chunk.text] {
        let mut stream = analyzer.token_stream(text);
        while stream.advance() {
            if let Some(t) = terms.iter().find(|t| t.term == stream.token().text) {
                present.insert(&t.term);
            }
        }
    }
    score::coverage(terms, |t| present.contains(t))
}
