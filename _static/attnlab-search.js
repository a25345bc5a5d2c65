/* attnlab: search results without raw TeX. Sphinx's search page shows section titles and
   snippets of text taken from the pages, where a formula is still its TeX source
   ("Why divide by \(\sqrt{d}\)?"): the search page does not typeset them. Here each
   formula becomes readable text ("Why divide by √d?"): in the index's titles before the
   search runs, and in the text a snippet is cut from. Other pages: nothing to do.
   From disk, no snippets (see below). */
(function () {
  var GREEK = {
    alpha: "α", beta: "β", gamma: "γ", delta: "δ", epsilon: "ε", varepsilon: "ε",
    zeta: "ζ", eta: "η", theta: "θ", iota: "ι", kappa: "κ", lambda: "λ", mu: "μ",
    nu: "ν", xi: "ξ", pi: "π", rho: "ρ", sigma: "σ", tau: "τ", phi: "φ", varphi: "φ",
    chi: "χ", psi: "ψ", omega: "ω", Gamma: "Γ", Delta: "Δ", Theta: "Θ", Lambda: "Λ",
    Pi: "Π", Sigma: "Σ", Phi: "Φ", Psi: "Ψ", Omega: "Ω",
  };
  var SYMBOLS = {
    cdot: "·", times: "×", top: "ᵀ", infty: "∞", le: "≤", leq: "≤", ge: "≥", geq: "≥",
    ne: "≠", neq: "≠", approx: "≈", sum: "Σ", prod: "Π", ldots: "…", cdots: "⋯",
    dots: "…", in: "∈", to: "→", rightarrow: "→", leftarrow: "←", mapsto: "↦", pm: "±",
    sim: "∼", prime: "′", partial: "∂", nabla: "∇", odot: "⊙", otimes: "⊗", circ: "∘",
    lvert: "|", rvert: "|", vert: "|", lVert: "‖", rVert: "‖", mid: "|", langle: "⟨",
    rangle: "⟩", quad: " ", qquad: " ", ",": " ", ";": " ", ":": " ", "!": "", " ": " ",
    "{": "{", "}": "}", "%": "%", "$": "$", "_": "_", "#": "#", "&": "&",
  };
  var SUP = {"0": "⁰", "1": "¹", "2": "²", "3": "³", "4": "⁴", "5": "⁵", "6": "⁶",
             "7": "⁷", "8": "⁸", "9": "⁹", "+": "⁺", "-": "⁻", "−": "⁻", n: "ⁿ", i: "ⁱ",
             T: "ᵀ", "ᵀ": "ᵀ", "′": "′"};
  var SUB = {"0": "₀", "1": "₁", "2": "₂", "3": "₃", "4": "₄", "5": "₅", "6": "₆",
             "7": "₇", "8": "₈", "9": "₉", "+": "₊", "-": "₋", "−": "₋", i: "ᵢ", j: "ⱼ", k: "ₖ",
             t: "ₜ", h: "ₕ", n: "ₙ", m: "ₘ", s: "ₛ", p: "ₚ", l: "ₗ", x: "ₓ", e: "ₑ",
             o: "ₒ", a: "ₐ", r: "ᵣ", v: "ᵥ", u: "ᵤ"};
  var DROP = /^(left|right|big|Big|bigg|Bigg|bigl|bigr|Bigl|Bigr|displaystyle|textstyle|limits|nolimits|mathrm|mathit|mathbf|mathsf|mathtt|boldsymbol|bm|text|textrm|textit|textbf|operatorname|mathcal|mathbb|hat|tilde|bar|overline|underline|vec|underbrace|overbrace|begin|end)$/;

  // One argument: a {group} or a single character/command after position i.
  function arg(tex, i) {
    while (tex[i] === " ") { i++; }
    if (tex[i] === "{") {
      var depth = 0;
      for (var j = i; j < tex.length; j++) {
        if (tex[j] === "{") { depth++; }
        if (tex[j] === "}" && --depth === 0) { return [tex.slice(i + 1, j), j + 1]; }
      }
      return [tex.slice(i + 1), tex.length];
    }
    if (tex[i] === "\\") {
      var m = /^\\([A-Za-z]+|.)/.exec(tex.slice(i));
      return m ? [m[0], i + m[0].length] : ["", i + 1];
    }
    return [tex[i] || "", i + 1];
  }
  function script(text, table, mark) {
    var plain = text.replace(/\s+/g, "");
    var all = plain.split("").every(function (c) { return table[c]; });
    if (all) { return plain.split("").map(function (c) { return table[c]; }).join(""); }
    return mark + (plain.length > 1 ? "(" + plain + ")" : plain);
  }
  function convert(tex) {
    var out = "", i = 0;
    while (i < tex.length) {
      var c = tex[i];
      if (c === "\\") {
        var m = /^\\([A-Za-z]+|.)/.exec(tex.slice(i));
        if (!m) { i++; continue; }
        var name = m[1];
        i += m[0].length;
        if (name === "frac" || name === "tfrac" || name === "dfrac") {
          var a = arg(tex, i), b = arg(tex, a[1]);
          var num = convert(a[0]), den = convert(b[0]);
          out += (num.length > 1 ? "(" + num + ")" : num) + "/" +
                 (den.length > 1 ? "(" + den + ")" : den);
          i = b[1];
        } else if (name === "sqrt") {
          var r = arg(tex, i), inner = convert(r[0]);
          out += "√" + (inner.length > 1 ? "(" + inner + ")" : inner);
          i = r[1];
        } else if (name === "begin" || name === "end") {
          i = arg(tex, i)[1];
        } else if (GREEK[name]) {
          out += GREEK[name];
        } else if (SYMBOLS[name] !== undefined) {
          out += SYMBOLS[name];
        } else if (name === "\\") {
          out += "; ";
        } else if (!DROP.test(name)) {
          out += name;  // \max, \exp, \log, \sin, ...: the name itself
        }
      } else if (c === "^" || c === "_") {
        var s = arg(tex, i + 1);
        out += script(convert(s[0]), c === "^" ? SUP : SUB, c);
        i = s[1];
      } else if (c === "{" || c === "}") {
        i++;
      } else if (c === "&") {
        out += " ";
        i++;
      } else if (c === "-") {
        out += "−";
        i++;
      } else {
        out += c;
        i++;
      }
    }
    return out.replace(/\s+/g, " ");
  }
  var MATH = /\\\(([\s\S]*?)\\\)|\\\[([\s\S]*?)\\\]|\$\$([\s\S]*?)\$\$/g;
  function readable(text) {
    return text.replace(MATH, function (_, a, b, c) {
      return convert((a !== undefined ? a : b !== undefined ? b : c).trim());
    });
  }
  function fixIndex(index) {
    if (!index || index.attnlabReadable) { return; }
    if (index.titles) { index.titles = index.titles.map(readable); }
    if (index.alltitles) {
      var titles = {};
      Object.keys(index.alltitles).forEach(function (key) {
        titles[readable(key)] = index.alltitles[key];
      });
      index.alltitles = titles;
    }
    index.attnlabReadable = true;
  }
  function patch() {
    if (typeof Search === "undefined") { return; }
    fixIndex(Search._index);
    var setIndex = Search.setIndex;
    Search.setIndex = function (index) { fixIndex(index); return setIndex(index); };
    var htmlToText = Search.htmlToText;
    Search.htmlToText = function (html, anchor) {
      var doc = new DOMParser().parseFromString(html, "text/html");
      doc.querySelectorAll(".math").forEach(function (el) {
        el.textContent = readable(el.textContent);
      });
      return htmlToText(doc.documentElement.outerHTML, anchor);
    };
  }
  // A page opened from disk (file:) may not fetch another page: Sphinx's search would
  // try, for each result's snippet, and log two errors a result. There, the results are
  // listed without snippets.
  if (location.protocol === "file:" && typeof DOCUMENTATION_OPTIONS !== "undefined") {
    DOCUMENTATION_OPTIONS.SHOW_SEARCH_SUMMARY = false;
  }
  window.attnlabReadableTeX = readable;  // for the browser test
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", patch);
  } else {
    patch();
  }
})();
