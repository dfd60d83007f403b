// Starts GraphiQL in #graphiql against the endpoint in its data-endpoint
// attribute, with the headers of its data-headers attribute (a JSON object)
// in the headers pane and, on a first visit (no saved tabs), the query of
// its data-query attribute in the editor. A file of its own, not an inline script, so that the
// page's Content-Security-Policy can allow scripts from the server only.
(function () {
  'use strict';
  // The page's style nonce, for the <style> element GraphiQL's dialogs add
  // (they read it from this global, as webpack builds do).
  window.__webpack_nonce__ = document.currentScript.nonce;
  var root = document.getElementById('graphiql');
  var url = new URL(root.dataset.endpoint, location.href);
  var subscriptionUrl = new URL(url.href);
  subscriptionUrl.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  var headers = JSON.parse(root.dataset.headers || '{}') || {};
  var hasHeaders = Object.keys(headers).length > 0;
  // Subscriptions go over a WebSocket to the same /query (ws: or wss: as the
  // page), through the graphql-ws client GraphiQL's bundle carries; the
  // headers pane's headers become connection_init's payload, so its
  // Authorization authenticates the socket. connect-src 'self' admits it.
  var fetcher = GraphiQL.createFetcher({ url: url.href, subscriptionUrl: subscriptionUrl.href });
  ReactDOM.createRoot(root).render(
    React.createElement(GraphiQL, {
      fetcher: fetcher,
      isHeadersEditorEnabled: true,
      shouldPersistHeaders: true,
      headers: hasHeaders ? JSON.stringify(headers, null, 2) : undefined,
      defaultQuery: root.dataset.query || undefined,
      defaultEditorToolsVisibility: hasHeaders ? 'headers' : undefined,
      inputValueDeprecation: true,
    }),
  );
})();
