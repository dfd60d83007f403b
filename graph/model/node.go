package model

// Node is any object with a global id: *dynamo.User, *dynamo.Project,
// *dynamo.Task or *dynamo.Comment. The domain types need no marker method.
type Node interface{}
