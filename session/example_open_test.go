package session_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agcore/agcore/session"
	_ "github.com/agcore/agcore/session/stores" // every kind of store
)

// ExampleOpen opens the store a user named, whichever kind it is.
func ExampleOpen() {
	st, err := session.Open(context.Background(), "memory:")
	if err != nil {
		fmt.Println(err) // one line, naming the store without its password
		return
	}
	defer st.Close()
	fmt.Println(st.Description, st.Durable)

	_, err = session.Open(context.Background(), "postgres://agcore:s3cret@127.0.0.1:1/agcore")
	fmt.Println(strings.Contains(err.Error(), "postgres://agcore:xxxxx@127.0.0.1:1/agcore"), errors.Is(err, session.ErrUnavailable))
	// Output:
	// memory: false
	// true true
}
