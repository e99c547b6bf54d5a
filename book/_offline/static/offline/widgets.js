/* Runs between require.js and the ipywidgets HTML manager on pages with saved widget state
   (assets/offline_assets.py puts it there).
   1. The manager finds its icon fonts from its AMD module name, which require.js resolves against
      the page's folder: map that name (and the bare "@jupyter-widgets") to the folder the book
      serves the manager from.
   2. Widgets typeset the LaTeX in their labels with the MathJax 2 call MathJax.Hub.Queue; the book
      loads MathJax 3, which has no Hub: route those calls to MathJax 3's typesetPromise. */
(function () {
  var here = document.currentScript.src.replace(/[?#].*$/, "").replace(/[^/]*$/, "");
  // Some loads (seen once in CI, on the chapter 6 page) ask for the fonts as "@jupyter-widgets/<file>"
  // instead: that name maps to the same folder (require.js takes the longest matching path).
  window.require.config({paths: {"@jupyter-widgets/html-manager/dist": here + "vendor/html-manager",
                                 "@jupyter-widgets": here + "vendor/html-manager"}});

  function bridgeMathJax() {
    var mj = window.MathJax;  // MathJax 3 once its (deferred) script has run; absent on pages without maths
    if (!mj || mj.Hub || !mj.startup) return;
    mj.Hub = {
      Queue: function () {
        Array.prototype.forEach.call(arguments, function (job) {
          if (Array.isArray(job) && job[0] === "Typeset" && job[2]) {
            mj.startup.promise = Promise.resolve(mj.startup.promise)
              .then(function () { return mj.typesetPromise([job[2]]); });
          }
        });
      }
    };
  }
  // deferred scripts (MathJax) have run by DOMContentLoaded; the manager draws widgets at "load"
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", bridgeMathJax);
  else bridgeMathJax();
})();
