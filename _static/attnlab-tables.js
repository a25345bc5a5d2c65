/* attnlab: a table too wide for the column is stacked (see _static/attnlab.css): each row
   becomes a block, each cell a line headed by its column's title (a copy of the header
   cell, formulas included). Checked when the page is laid out (after MathJax, where the
   page still typesets its formulas in the browser), and again when the window changes
   size. When done, <html data-attnlab-fitted="1"> (the browser test waits for it). */
(function () {
  function label(table) {
    if (table.dataset.attnlabLabelled) { return; }
    var head = table.querySelector("thead tr");
    if (!head) { return; }
    var titles = head.children;
    table.querySelectorAll("tbody tr").forEach(function (row) {
      for (var i = 0; i < row.children.length && i < titles.length; i++) {
        var span = document.createElement("span");
        span.className = "attnlab-cell-label";
        span.setAttribute("aria-hidden", "true");
        var title = titles[i];
        if (title.children.length === 1 && title.firstElementChild.tagName === "P") {
          title = title.firstElementChild;  // MyST writes a header cell's text in a <p>
        }
        title.childNodes.forEach(function (node) { span.appendChild(node.cloneNode(true)); });
        row.children[i].insertBefore(span, row.children[i].firstChild);
      }
    });
    table.dataset.attnlabLabelled = "1";
  }
  function fit() {
    document.querySelectorAll("article table").forEach(function (table) {
      if (!table.querySelector("thead tr") || table.closest(".attnlab-score")) { return; }
      table.classList.remove("attnlab-stacked");
      var box = table.parentElement;
      if (table.getBoundingClientRect().width > box.clientWidth + 1 ||
          table.scrollWidth > table.clientWidth + 1) {
        label(table);
        table.classList.add("attnlab-stacked");
      }
    });
    document.documentElement.dataset.attnlabFitted = "1";
  }
  var tries = 0;
  function start() {
    var typeset = window.MathJax && MathJax.startup && MathJax.startup.promise;
    // Formulas are typeset when the book is built; a page built without that loads
    // MathJax (deferred), which may not have started yet.
    var mathjax = document.querySelector('script[src*="mathjax"]');
    if (mathjax && !typeset && tries++ < 200) {
      setTimeout(start, 50);
      return;
    }
    (typeset || Promise.resolve()).then(fit, fit);
    var timer = null;
    window.addEventListener("resize", function () {
      clearTimeout(timer);
      timer = setTimeout(fit, 100);
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
