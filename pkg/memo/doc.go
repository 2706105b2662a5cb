// Package memo caches a value derived from a pointed-to value for as long as
// that value lives. Scorers use it to index a Company OS snapshot once per
// batch: every case of a batch that carries the same snapshot shares the same
// pointer, so the index is built once, and it is dropped when the batch's
// snapshots are garbage collected. The data type being indexed holds no cache.
package memo
