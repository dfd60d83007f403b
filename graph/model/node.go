package model

// Node is any object with a global id: *domain.User, *domain.Project,
// *domain.Task or *domain.Comment. The domain types need no marker method.
type Node interface{}
