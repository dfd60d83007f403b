package bench

import "testing"

func TestTaskTitleReadsTheEventsTaskTitle(t *testing.T) {
	for _, c := range []struct {
		name, payload, want string
		ok                  bool
	}{
		{"plain", `{"data":{"projectEvents":{"cursor":"c","kind":"TASK_UPDATED","task":{"id":"t","title":"19000 subscribers, change 3, project 1","status":"TODO"}}}}`, "19000 subscribers, change 3, project 1", true},
		{"escaped, by JSON", `{"data":{"projectEvents":{"task":{"id":"t","title":"a \"quoted\" title"}}}}`, `a "quoted" title`, true},
		{"no task", `{"data":{"projectEvents":{"cursor":"c","task":null}}}`, "", false},
		{"not JSON", `{"data":`, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := taskTitle([]byte(c.payload))
			if got != c.want || ok != c.ok {
				t.Fatalf("taskTitle = %q, %v; want %q, %v", got, ok, c.want, c.ok)
			}
		})
	}
}
