package httpapi

import (
	"errors"

	"github.com/pregao/pregao/engine"
)

func isNotFound(err error) bool { return errors.Is(err, engine.ErrNotFound) }
func isInvalid(err error) bool  { return errors.Is(err, engine.ErrInvalid) }
