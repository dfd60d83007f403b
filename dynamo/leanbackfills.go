package dynamo

import (
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The backfills of the lean indexes, GSI3 (a project's comments) and GSI4
// (a project's tasks), registered in keys.go's backfills.

// commentsLeanBackfill gives each comment written before GSI3 its key
// there, from its key in GSI1 (which EnsureCommentIndex gave it before).
var commentsLeanBackfill = backfill{name: "comments-gsi3", types: []string{typeComment}, reads: []string{attrGSI1PK},
	set: func(it item) item {
		pu, ok := strings.CutPrefix(str(it, attrGSI1PK), projectCommentsPK(""))
		if !ok || pu == "" {
			return nil // no collection: its task is gone (the cleanup's to delete)
		}
		return item{attrGSI3PK: &types.AttributeValueMemberS{Value: leanCommentsPK(pu)}}
	}}

// tasksLeanBackfill gives each task written before GSI4 its key there,
// from its project's, in GSI1 (a lean item has no projectId: the
// condition of the write reads what is stored).
var tasksLeanBackfill = backfill{name: "tasks-gsi4", types: []string{typeTask}, reads: []string{attrGSI1PK},
	set: func(it item) item {
		pu, ok := strings.CutPrefix(str(it, attrGSI1PK), projectTasksPK(""))
		if !ok || pu == "" {
			return nil
		}
		return item{attrGSI4PK: &types.AttributeValueMemberS{Value: leanTasksPK(pu)}}
	}}
