// cfnrun console: keeps a page's <main> current while stacks change (issue #35).
// The page names its event stream in <main data-events="...">; each "changed" notice re-fetches the
// page (from <main data-source="..."> if given: a stack's page by its id, which still finds it once deleted)
// and swaps its <main> in. One fetch at a time: notices that come during one cause one more after it.
// Without JavaScript the page is the same, as of its loading. No inline script: the CSP allows only 'self'.
(function () {
  "use strict";
  var main = document.getElementById("live");
  if (!main || !main.dataset.events || !window.EventSource) {
    return;
  }
  var fetching = false;
  var again = false;

  function refresh() {
    if (fetching) {
      again = true;
      return;
    }
    fetching = true;
    again = false;
    fetch(main.dataset.source || window.location.href, { headers: { Accept: "text/html" }, cache: "no-store" })
      .then(function (answer) { return answer.ok ? answer.text() : null; })
      .then(function (html) {
        if (html === null) {
          return;
        }
        var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("live");
        if (fresh) {
          main.innerHTML = fresh.innerHTML;
        }
      })
      .catch(function () { /* serve stopped or restarts: the stream says when it is back */ })
      .then(function () {
        fetching = false;
        if (again) {
          refresh();
        }
      });
  }

  var stream = new EventSource(main.dataset.events);
  stream.addEventListener("changed", refresh);
  stream.addEventListener("open", refresh); // back after serve restarted: catch up once
})();
