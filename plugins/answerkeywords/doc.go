// Package answerkeywords is the built-in answer_keywords scorer: the final
// answer contains the required terms (answer_keywords, the fraction found by
// case-insensitive substring match) and has enough substance
// (min_answer_length, 1 at n runes or more, else len/n).
//
// Neither check carries a failure tag: a short answer or a missing term is
// not one of the taxonomy's failures (the answer need not be grounded in
// memory, and a missing final response is finalize_missing, which the host
// derives from the trace).
package answerkeywords
