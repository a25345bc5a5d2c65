/* attnlab: make every sidebar toggle work (see tools/attnlab_book.py).
   pydata-sphinx-theme 0.17.1 and sphinx-book-theme 1.3 bind their click handlers to the
   first ".primary-toggle" / ".secondary-toggle" only, which is hidden below 992 px; the
   visible button then does nothing (pydata-sphinx-theme issue #2451). A click on any other
   toggle of the same kind is forwarded to the first one, which opens the chapter list
   (narrow screens) or hides the sidebar (wide screens), as the themes intend. */
(function () {
  function forward(selector) {
    var toggles = document.querySelectorAll(selector);
    for (var i = 1; i < toggles.length; i++) {
      toggles[i].addEventListener("click", function (event) {
        event.preventDefault();
        event.stopImmediatePropagation();
        toggles[0].click();
      }, true);
    }
  }
  function setup() {
    forward(".primary-toggle");
    forward(".secondary-toggle");
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setup);
  } else {
    setup();
  }
})();
