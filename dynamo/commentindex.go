package dynamo

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/taskgraph/taskgraph/cursor"
	"github.com/taskgraph/taskgraph/domain"
)

// The comment collections. Every comment item also sits in its project's
// collection in GSI1 (projectCommentsPK), by task and then comment
// (projectCommentSK), so a task's thread is contiguous and oldest first
// there as in its own partition. A screen that lists the first comments
// of many tasks of a project (the dashboard: 20 tasks, comments(first: 5))
// reads them with one Query of that collection rather than one Query per
// task: a Query is billed its items' summed size rounded up to 4 KB, so 20
// Queries of a few small comments each cost 20 half units where one costs
// one half unit per 4 KB read (docs/design.md, Floors).
//
// The collection's keys are written with the comment (addComment, the
// dataset, a loaded dump); a table written before them gets them once
// (EnsureCommentIndex) and, until it has its marker, reads per task.
//
// Each comment is also in its project's partition of GSI3
// (leanCommentsPK), whose entries hold only its keys and what a list of
// comments shows (author, body, time: onGSI3's projection), about half
// the item: the collection is read there once the backfill that gives the
// comments written before GSI3 their key there (commentsLeanBackfill) is
// done, and in GSI1 until then.

const typeCommentIndexMarker = "COMMENTINDEX"

func commentIndexMarker() item {
	it := commentIndexedKey.av()
	it["type"] = &types.AttributeValueMemberS{Value: typeCommentIndexMarker}
	return it
}

// indexComment sets, in place, a comment item's keys in the collection of
// its task's project (pu, a ULID), and returns it.
func indexComment(it item, pu string) item {
	t, c := ulidOf(str(it, attrPK)), ulidOf(str(it, attrSK))
	it[attrGSI1PK] = &types.AttributeValueMemberS{Value: projectCommentsPK(pu)}
	it[attrGSI1SK] = &types.AttributeValueMemberS{Value: projectCommentSK(t, c)}
	it[attrGSI3PK] = &types.AttributeValueMemberS{Value: leanCommentsPK(pu)}
	return it
}

// indexComments sets, in place, the collection keys of every comment among
// items, a whole table (a dump), from its task's project. A comment whose
// task is gone (the cleanup's to delete) is left as it is.
func indexComments(items []item) {
	projectOf := map[string]string{} // task ULID → project ULID
	for _, it := range items {
		if str(it, "type") == typeTask {
			projectOf[ulidOf(str(it, "id"))] = ulidOf(str(it, "projectId"))
		}
	}
	for _, it := range items {
		if str(it, "type") != typeComment {
			continue
		}
		if pu, ok := projectOf[ulidOf(str(it, attrPK))]; ok {
			indexComment(it, pu)
		}
	}
}

// EnsureCommentIndex gives an existing table's comments their collection
// keys once: when the table has no marker (written by a version without
// them), it reads the tasks and comments (one Scan, filtered: a
// migration, run once), sets each comment's keys (an update conditioned on
// the comment's existence), then writes the marker. A new table gets the
// marker at creation. Until it ends, comments are read per task. Returns
// EUNAVAILABLE.
func (s *Store) EnsureCommentIndex(ctx context.Context) error {
	it, err := s.getOne(ctx, commentIndexedKey)
	if err != nil {
		return err
	}
	if it != nil {
		s.commentIndexed.Store(true)
		return nil
	}
	sc, ok := s.db.(scanner)
	if !ok {
		s.Log.Warn("this table's comments have no project collection keys and its client cannot scan to give them: comments are read per task")
		return nil
	}
	items, err := scanTypes(ctx, sc, s.table, typeTask, typeComment)
	if err != nil {
		return err
	}
	indexComments(items)
	n, err := s.setEach(ctx, items, func(it item) bool { return str(it, "type") == typeComment && it[attrGSI1PK] != nil },
		attrGSI1PK, attrGSI1SK, attrGSI3PK)
	if err != nil {
		return err
	}
	if err := s.markCommentIndex(ctx); err != nil {
		return err
	}
	s.Log.Info("comments given their project collection keys (once)", "comments", strconv.Itoa(n))
	return nil
}

// markCommentIndex writes the marker of a table whose comments carry their
// collection keys (a new table, or once EnsureCommentIndex has given them)
// and reads the collections from then on.
func (s *Store) markCommentIndex(ctx context.Context) error {
	err := s.batchWrite(ctx, []types.WriteRequest{{PutRequest: &types.PutRequest{Item: commentIndexMarker()}}})
	if err == nil {
		s.commentIndexed.Store(true)
	}
	return err
}

// CommentsAsk asks for a page of a task's comments (CommentsOf), with what
// the asker knows of the task: its project and its comment count
// (ProjectID "" when unknown).
type CommentsAsk struct {
	TaskID, ProjectID string
	CommentCount      int
	Page              domain.Page
}

// commentItemBytes is the size a comment item is taken to have when
// choosing how to read a batch of threads: its keys, ids and time (about
// 250 bytes) and a short body. A misjudged size costs at most the Query's
// Limit (threadsLimit) in items.
const commentItemBytes = 512

// collectionPays reports whether one Query of a project's collection,
// reading the whole threads of n tasks with items comments in all, costs
// at most half what n Queries of a thread each cost (one 4 KB block each
// at least): the half is the margin for items larger than
// commentItemBytes.
func collectionPays(n, items int) bool {
	blocks := max(1, (items*commentItemBytes+4095)/4096)
	return n >= 2 && 2*blocks <= n
}

// threadsLimit bounds the items one Query of a collection reads: the
// threads asked for and a few of tasks between them that were not.
func threadsLimit(items int) int32 { return int32(min(1000, items+max(8, items/2))) }

// CommentsOfTasks reads the pages of comments that asks ask for, each as
// CommentsOf would. The first pages (first, no cursor) of tasks of one
// project whose known counts make it pay (collectionPays) are read with
// one Query of the project's comment collection, eventually consistent as
// a per-task read of a screen is; a thread the Query did not read to its
// page's end (its Limit reached) and every other page are read per task.
// All Queries run at once. Returns, per ask, EINVALID, EUNAVAILABLE.
func (s *Store) CommentsOfTasks(ctx context.Context, asks []CommentsAsk) ([]*domain.Conn[*domain.Comment], []error) {
	res := make([]*domain.Conn[*domain.Comment], len(asks))
	errs := make([]error, len(asks))
	var single []int
	groups := map[string][]int{} // project ULID → asks
	var order []string
	collections := s.commentIndexed.Load() && !strong(ctx)
	for i, a := range asks {
		_, terr := domain.ParseTaskID(a.TaskID)
		p := a.Page
		if !collections || terr != nil || a.ProjectID == "" || p.After != nil || p.Before != nil || edgeSize(p) < 1 || edgeSize(p) > MaxFirst {
			single = append(single, i)
			continue
		}
		pu := ulidOf(a.ProjectID)
		if groups[pu] == nil {
			order = append(order, pu)
		}
		groups[pu] = append(groups[pu], i)
	}
	var jobs []func(ctx context.Context) []int // each returns the asks left to read per task
	for _, pu := range order {
		g := groups[pu]
		items := 0
		for _, i := range g {
			items += max(asks[i].CommentCount, 0)
		}
		if !collectionPays(len(g), items) {
			single = append(single, g...)
			continue
		}
		jobs = append(jobs, func(ctx context.Context) []int {
			return s.readThreads(ctx, pu, asks, g, items, res, errs)
		})
	}
	perTask := func(ctx context.Context, idx []int) {
		_ = s.parallel(ctx, len(idx), func(ctx context.Context, j int) error {
			i := idx[j]
			res[i], errs[i] = s.CommentsOf(ctx, asks[i].TaskID, asks[i].Page)
			return nil
		})
	}
	n := len(jobs) + len(single)
	if n == 0 {
		return res, errs
	}
	_ = s.parallel(ctx, n, func(ctx context.Context, j int) error {
		if j < len(jobs) {
			if left := jobs[j](ctx); len(left) > 0 {
				perTask(ctx, left)
			}
			return nil
		}
		perTask(ctx, single[j-len(jobs):j-len(jobs)+1])
		return nil
	})
	return res, errs
}

// readThreads reads the first pages of the asks g, tasks of project pu with
// items comments in all, with one Query of the project's collection
// between the first and the last task's thread, into res and errs. It
// returns the asks whose page the Query did not reach the end of.
func (s *Store) readThreads(ctx context.Context, pu string, asks []CommentsAsk, g []int, items int, res []*domain.Conn[*domain.Comment], errs []error) []int {
	lo, hi := "", ""
	for _, i := range g {
		t := ulidOf(asks[i].TaskID)
		if lo == "" || t < lo {
			lo = t
		}
		hi = max(hi, t)
	}
	lean := s.hasBackfill(commentsLeanBackfill)
	out, err := s.db.Query(ctx, threadsQuery(s.table, lean, pu, lo, hi, items))
	if err != nil {
		for _, i := range g {
			errs[i] = wrap(err, "reading a list")
		}
		return nil
	}
	threads := map[string][]item{} // task ULID → its comments read, oldest first
	for _, it := range out.Items {
		if t, ok := threadOfEntry(it, lean); ok {
			threads[t] = append(threads[t], it)
		}
	}
	if lean {
		for t, th := range threads {
			threads[t] = leanThread(th)
		}
	}
	// With more to read, the threads from the last one read on may be cut.
	cut := "~"
	if len(out.LastEvaluatedKey) > 0 {
		t, ok := threadOfEntry(out.LastEvaluatedKey, lean)
		if !ok {
			return g
		}
		cut = t
	}
	var left []int
	for _, i := range g {
		t, size, back := ulidOf(asks[i].TaskID), edgeSize(asks[i].Page), asks[i].Page.Last != nil
		th := threads[t]
		// A thread before the cut was read whole; the cut one holds its
		// first items only (in GSI1; in GSI3, some of its items, which
		// tie there), enough for a first page that fits, never for a last
		// page.
		if t >= cut && (lean || back || len(th) <= size) {
			left = append(left, i)
			continue
		}
		page := &domain.Conn[item]{Items: th[:min(len(th), size)], HasNext: len(th) > size}
		if back { // the last items, in the connection's order; hasNext false on a backward page
			page = &domain.Conn[item]{Items: th[max(0, len(th)-size):], HasPrev: len(th) > size}
		}
		page.Cursors = make([]string, len(page.Items))
		for j, it := range page.Items {
			page.Cursors[j] = cursor.List(str(it, attrSK))
		}
		res[i], errs[i] = convConn(page, decodeAs[*domain.Comment])
	}
	return left
}

// edgeSize is a page's size asked from either end: first, or last when
// set.
func edgeSize(p domain.Page) int {
	if p.Last != nil {
		return *p.Last
	}
	return p.First
}

// threadsQuery is the Query of the threads of tasks lo to hi of project pu
// in its collection, GSI3's when lean, else GSI1's, reading at most
// threadsLimit(items) entries.
func threadsQuery(table string, lean bool, pu, lo, hi string, items int) *dynamodb.QueryInput {
	p, pk, from, to := commentsOfProjectTasks, projectCommentsPK(pu), threadOf(lo), threadOf(hi)+rangeEnd
	if lean {
		p, pk, from, to = leanCommentsOfProjectTasks, leanCommentsPK(pu), taskPK(lo), taskPK(hi)
	}
	return &dynamodb.QueryInput{TableName: &table, IndexName: aws.String(p.index),
		KeyConditionExpression: aws.String(keyBetween), ExpressionAttributeNames: p.names(),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: pk},
			":lo": &types.AttributeValueMemberS{Value: from},
			":hi": &types.AttributeValueMemberS{Value: to}},
		Limit: aws.Int32(threadsLimit(items))}
}

// threadOfEntry returns the task ULID of a collection's entry (or of its
// LastEvaluatedKey): from its sort key in GSI1, its table key in GSI3.
func threadOfEntry(it item, lean bool) (string, bool) {
	if !lean {
		return taskOfProjectCommentSK(str(it, attrGSI1SK))
	}
	rest, ok := strings.CutPrefix(str(it, attrPK), taskPK(""))
	if !ok {
		return "", false
	}
	return domain.ParseULID(rest)
}

// leanThread puts a thread's GSI3 entries in order (oldest first: by SK,
// the comment's ULID; they tie on their index keys, whose order DynamoDB
// leaves open) and gives each the type decode reads; their ids and task
// ids are filled in from their keys as every comment item's are
// (leanitems.go).
func leanThread(th []item) []item {
	slices.SortFunc(th, func(a, b item) int { return strings.Compare(str(a, attrSK), str(b, attrSK)) })
	for _, it := range th {
		it["type"] = &types.AttributeValueMemberS{Value: typeComment}
	}
	return th
}
