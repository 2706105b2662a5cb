package queue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// RecentWindow is how far back Status looks for workers.
const RecentWindow = 15 * time.Minute

// Status is the queue as `assay doctor` shows it.
type Status struct {
	Installed bool         `json:"installed"` // River's tables exist
	Jobs      Counts       `json:"jobs"`
	Workers   []WorkerSeen `json:"workers"` // workers that took a job within RecentWindow
	Error     string       `json:"error,omitempty"`
}

// WorkerSeen is a worker and the last time it took a job.
type WorkerSeen struct {
	ID       string    `json:"id"`
	LastSeen time.Time `json:"last_seen"`
}

// ReadStatus reads the queue's jobs and recent workers. A database without
// River's tables is reported as not installed, not as an error.
func ReadStatus(ctx context.Context, pool *pgxpool.Pool) Status {
	var st Status
	c, err := RunCounts(ctx, pool, 0)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42P01" { // undefined_table
		return st
	}
	if err != nil {
		st.Error = err.Error()
		return st
	}
	st.Installed, st.Jobs, st.Workers = true, c, []WorkerSeen{}
	rows, err := pool.Query(ctx, `SELECT attempted_by[array_length(attempted_by, 1)], max(attempted_at) FROM river_job
		WHERE kind = $1 AND attempted_at > now() - $2::interval AND attempted_by IS NOT NULL
		GROUP BY 1 ORDER BY 2 DESC`, Kind, fmt.Sprintf("%d seconds", int(RecentWindow.Seconds())))
	if err != nil {
		st.Error = fmt.Sprintf("reading workers: %v", err)
		return st
	}
	defer rows.Close()
	for rows.Next() {
		var w WorkerSeen
		if err := rows.Scan(&w.ID, &w.LastSeen); err != nil {
			st.Error = fmt.Sprintf("reading workers: %v", err)
			return st
		}
		st.Workers = append(st.Workers, w)
	}
	return st
}
