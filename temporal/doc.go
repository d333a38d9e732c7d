// Package agtemporal runs agcore turns as Temporal workflows (durable
// runs). The full design is documented in this file at the end of the
// work; see TurnWorkflow.
package agtemporal
