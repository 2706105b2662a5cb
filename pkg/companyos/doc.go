// Package companyos is the model of a Company OS state snapshot: the tasks
// (with their context notes) and the memory entries that state-aware scorers
// read. It has the shape of the Company OS API.
package companyos
